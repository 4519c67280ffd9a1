import type { ServerResponse } from 'node:http';
import { fileURLToPath } from 'node:url';
import { rapiDocMount, swaggerUiMount, type UiDocument } from '@svcboot/entry-core/toolkit';

/**
 * The package's assets/ folder (next to src/ and dist/, so the same from sources and from the
 * build): the UI files copied from the pinned rapidoc and swagger-ui-dist at build time
 * (tools/scripts/copy-ui-assets.mjs), shipped in the package instead of depending on those
 * packages. The UIs themselves are entry-core's (`swaggerUiMount`, `rapiDocMount`).
 */
const ASSETS_DIR = fileURLToPath(new URL('../assets/', import.meta.url));

const missingAssets = (file: string): string =>
  `the UI file ${file} is missing: this copy of @svcboot/grpc-server was built without its assets/ folder. ` +
  'In the svcboot workspace run `npm run build -w @svcboot/grpc-server` (it copies the files from the pinned rapidoc and swagger-ui-dist); a published package always ships them';

/** A UI mounted at a folder path (`/sw/`): answers the paths under it, 404 included. */
export interface UiMount {
  readonly mountPath: string;
  /** True when the path belongs to this mount (it then answered). */
  serve(pathname: string, res: ServerResponse): Promise<boolean>;
}

const SPEC_FILE = 'swagger.json';
/** The OpenAPI 3.1 document beside the 2.0 one. */
const SPEC_V3_FILE = 'openapi.json';

function documents(document: () => string, documentV3?: () => string): UiDocument[] {
  const list: UiDocument[] = [
    { file: SPEC_FILE, name: 'OpenAPI 2.0 (swagger.json)', text: document },
  ];
  if (documentV3)
    list.push({ file: SPEC_V3_FILE, name: 'OpenAPI 3.1 (openapi.json)', text: documentV3 });
  return list;
}

/**
 * Swagger UI at `mountPath`, showing the entry's OpenAPI documents: 2.0 (`swagger.json`) first
 * and, when there is one, 3.1 (`openapi.json`) to pick from the top bar.
 */
export function swaggerUi(
  mountPath: string,
  document: () => string,
  title: string,
  documentV3?: () => string,
  headers: Readonly<Record<string, string>> = {},
): UiMount {
  const m = swaggerUiMount({
    mountPath,
    assetsDir: ASSETS_DIR,
    title,
    documents: documents(document, documentV3),
    headers,
    missingAssets,
  });
  return { mountPath, serve: (pathname, res) => m.answer(pathname, res) };
}

/** RapiDoc at `mountPath`, on the OpenAPI 2.0 document; the 3.1 one is served beside it. */
export function rapiDoc(
  mountPath: string,
  document: () => string,
  title: string,
  documentV3?: () => string,
  options: { headers?: Readonly<Record<string, string>>; theme?: 'light' | 'dark' } = {},
): UiMount {
  const m = rapiDocMount({
    mountPath,
    assetsDir: ASSETS_DIR,
    title,
    documents: documents(document, documentV3),
    ...(options.headers ? { headers: options.headers } : {}),
    ...(options.theme ? { theme: options.theme } : {}),
    missingAssets,
  });
  return { mountPath, serve: (pathname, res) => m.answer(pathname, res) };
}
