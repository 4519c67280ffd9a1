import { fileURLToPath } from 'node:url';
import type { EntryContext } from '@svcboot/entry-core';
import {
  rapiDocMount,
  swaggerUiMount,
  type UiDocument,
} from '@svcboot/entry-core/internal/http/api-ui';
import type { HttpRoute } from '@svcboot/entry-core/internal/http/route';
import { JSON_ONLY, readApiSpecs } from './api-specs.js';
import type { HttpEntryConfig } from './schema.js';

/**
 * The package's assets/ folder (next to src/ and dist/): Swagger UI's and RapiDoc's files, copied
 * from the pinned swagger-ui-dist and rapidoc at build time (tools/scripts/copy-ui-assets.mjs).
 */
const ASSETS_DIR = fileURLToPath(new URL('../assets/', import.meta.url));

const missingAssets = (file: string): string =>
  `the UI file ${file} is missing: this copy of @svcboot/entry-http was built without its assets/ folder. ` +
  'In the svcboot workspace run `npm run build -w @svcboot/entry-http`; a published package always ships them';

/** Where the OpenAPI files are when `sw.jsonPaths` is empty: the folder `swag init` writes. */
const DEFAULT_SPEC_FOLDER = 'docs';

/**
 * `sw` and `docs` (rk-gin's): Swagger UI and RapiDoc on the OpenAPI files the app provides,
 * read at bootstrap (SVC_HTTP_API_SPEC_MISSING when there are none).
 */
export async function apiUis(
  config: Pick<HttpEntryConfig, 'sw' | 'docs'>,
  ctx: Pick<EntryContext, 'app' | 'configPath'>,
): Promise<HttpRoute[]> {
  const routes: HttpRoute[] = [];
  const sw = config.sw;
  let swDocs: UiDocument[] | undefined;
  const swSpecs = async () =>
    (swDocs ??= await readApiSpecs(
      sw.jsonPaths.length > 0 ? sw.jsonPaths : [DEFAULT_SPEC_FOLDER],
      { configPath: ctx.configPath, field: 'sw.jsonPaths' },
      JSON_ONLY,
    ));
  if (sw.enabled)
    routes.push(
      swaggerUiMount({
        mountPath: sw.path,
        assetsDir: ASSETS_DIR,
        title: ctx.app.name,
        documents: await swSpecs(),
        headers: sw.headers,
        missingAssets,
      }),
    );
  const docs = config.docs;
  if (docs.enabled) {
    const documents =
      docs.specPaths.length > 0
        ? await readApiSpecs(docs.specPaths, {
            configPath: ctx.configPath,
            field: 'docs.specPaths',
          })
        : await readApiSpecs(sw.jsonPaths.length > 0 ? sw.jsonPaths : [DEFAULT_SPEC_FOLDER], {
            configPath: ctx.configPath,
            field: 'docs.specPaths',
          });
    routes.push(
      rapiDocMount({
        mountPath: docs.path,
        assetsDir: ASSETS_DIR,
        title: ctx.app.name,
        documents,
        headers: docs.headers,
        theme: docs.style.theme,
        missingAssets,
      }),
    );
  }
  return routes;
}
