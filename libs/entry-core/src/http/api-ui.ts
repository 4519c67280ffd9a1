import { readFile } from 'node:fs';
import type { IncomingMessage, ServerResponse } from 'node:http';
import path from 'node:path';
import { promisify } from 'node:util';
import type { HttpRoute } from './route.js';

/** node:fs's readFile as a promise: node:fs/promises is not loaded for it (app.ts, readFileAsync). */
const readFileAsync = promisify(readFile);

/**
 * The two API UIs a server entry serves (Swagger UI from swagger-ui-dist, RapiDoc), on documents
 * it is given: entry-grpc's generated ones, or the spec files an httpserver entry's `sw` and
 * `docs` name. The UI's own files come from `assetsDir` (each package copies them at build time
 * with tools/scripts/copy-ui-assets.mjs); request paths are looked up in a fixed table, so `..`
 * or encoded separators can never reach the file system.
 */

const TYPES: Record<string, string> = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'application/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.png': 'image/png',
  '.json': 'application/json',
  '.yaml': 'application/yaml',
  '.yml': 'application/yaml',
};

interface Asset {
  /** A file, read once and kept. */
  file?: string;
  /** Or content made here. */
  text?: () => string;
}

/** A document a UI shows: its file name under the mount, its name in the picker, its text. */
export interface UiDocument {
  readonly file: string;
  readonly name: string;
  readonly text: () => string;
}

/** A UI mounted at a folder path (`/sw/`), serving only the files it names. */
export class UiMount implements HttpRoute {
  private readonly cache = new Map<string, Buffer>();
  constructor(
    readonly mountPath: string,
    private readonly assets: ReadonlyMap<string, Asset>,
    /** Added to every response of the mount (rk-boot's `sw.headers` / `docs.headers`). */
    private readonly headers: Readonly<Record<string, string>> = {},
    /** Said when a UI file is missing (a build without its assets). */
    private readonly missingAssets: (file: string) => string = (f) => `the UI file ${f} is missing`,
  ) {}

  match(pathname: string): string | undefined {
    if (pathname === this.mountPath.slice(0, -1) || pathname.startsWith(this.mountPath))
      return `${this.mountPath}*`;
    return undefined;
  }

  async serve(_req: IncomingMessage, res: ServerResponse, pathname: string): Promise<void> {
    await this.answer(pathname, res);
  }

  /** True when the path belongs to this mount (it then answers, 404 included). */
  async answer(pathname: string, res: ServerResponse): Promise<boolean> {
    if (pathname === this.mountPath.slice(0, -1)) {
      res.statusCode = 301;
      res.setHeader('Location', this.mountPath);
      res.end();
      return true;
    }
    if (!pathname.startsWith(this.mountPath)) return false;
    const name = pathname.slice(this.mountPath.length) || 'index.html';
    const asset = this.assets.get(name);
    if (!asset) {
      res.statusCode = 404;
      res.setHeader('Content-Type', 'text/plain; charset=utf-8');
      res.end('Not Found');
      return true;
    }
    let body = this.cache.get(name);
    if (!body) {
      body = asset.file ? await this.readAsset(asset.file) : Buffer.from(asset.text!(), 'utf8');
      if (asset.file) this.cache.set(name, body);
    }
    res.statusCode = 200;
    res.setHeader('Content-Type', TYPES[path.extname(name)] ?? 'application/octet-stream');
    res.setHeader('Cache-Control', 'no-cache');
    for (const [k, v] of Object.entries(this.headers)) res.setHeader(k, v);
    res.end(body);
    return true;
  }

  private async readAsset(file: string): Promise<Buffer> {
    try {
      return await readFileAsync(file);
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
      throw new Error(this.missingAssets(file));
    }
  }
}

export interface SwaggerUiOptions {
  mountPath: string;
  /** The folder holding assets/swagger-ui (swagger-ui-dist's files). */
  assetsDir: string;
  title: string;
  /** Shown in the top bar's picker in this order; the first is opened. */
  documents: readonly UiDocument[];
  headers?: Readonly<Record<string, string>>;
  missingAssets?: (file: string) => string;
}

/** Swagger UI at `mountPath` on `documents`. */
export function swaggerUiMount(o: SwaggerUiOptions): UiMount {
  const dir = path.join(o.assetsDir, 'swagger-ui');
  const files = [
    'swagger-ui.css',
    'swagger-ui-bundle.js',
    'swagger-ui-standalone-preset.js',
    'index.css',
    'favicon-16x16.png',
    'favicon-32x32.png',
    'oauth2-redirect.html',
    'oauth2-redirect.js',
  ];
  const assets = new Map<string, Asset>(files.map((f) => [f, { file: path.join(dir, f) }]));
  for (const d of o.documents) assets.set(d.file, { text: d.text });
  const source = (file: string): string =>
    `new URL(${JSON.stringify(file)}, window.location.href).href`;
  const specs =
    o.documents.length > 1
      ? `urls: [${o.documents.map((d) => `{ url: ${source(d.file)}, name: ${JSON.stringify(d.name)} }`).join(', ')}],\n    'urls.primaryName': ${JSON.stringify(o.documents[0]!.name)},`
      : `url: ${source(o.documents[0]?.file ?? 'swagger.json')},`;
  assets.set('swagger-initializer.js', {
    text: () =>
      `window.onload = function () {\n  window.ui = SwaggerUIBundle({\n    ${specs}\n    dom_id: '#swagger-ui',\n    deepLinking: true,\n    validatorUrl: null,\n    presets: [SwaggerUIBundle.presets.apis, SwaggerUIStandalonePreset],\n    plugins: [SwaggerUIBundle.plugins.DownloadUrl],\n    layout: 'StandaloneLayout',\n  });\n};\n`,
  });
  const html = `<!doctype html>
<html lang="en">
<head>
  <meta charset="utf-8">
  <title>${escapeHtml(o.title)} - Swagger UI</title>
  <link rel="stylesheet" href="swagger-ui.css">
  <link rel="stylesheet" href="index.css">
  <link rel="icon" type="image/png" href="favicon-32x32.png" sizes="32x32">
</head>
<body>
  <div id="swagger-ui"></div>
  <script src="swagger-ui-bundle.js"></script>
  <script src="swagger-ui-standalone-preset.js"></script>
  <script src="swagger-initializer.js"></script>
</body>
</html>
`;
  assets.set('index.html', { text: () => html });
  return new UiMount(o.mountPath, assets, o.headers, o.missingAssets);
}

export interface RapiDocOptions {
  mountPath: string;
  /** The folder holding assets/rapidoc (rapidoc-min.js). */
  assetsDir: string;
  title: string;
  /** The first is shown; the others are served beside it. */
  documents: readonly UiDocument[];
  headers?: Readonly<Record<string, string>>;
  theme?: 'light' | 'dark';
  missingAssets?: (file: string) => string;
}

/** RapiDoc at `mountPath` on the first of `documents`. */
export function rapiDocMount(o: RapiDocOptions): UiMount {
  const assets = new Map<string, Asset>([
    ['rapidoc-min.js', { file: path.join(o.assetsDir, 'rapidoc', 'rapidoc-min.js') }],
  ]);
  for (const d of o.documents) assets.set(d.file, { text: d.text });
  const spec = o.documents[0]?.file ?? 'swagger.json';
  const html = `<!doctype html>
<html lang="en">
<head>
  <meta charset="utf-8">
  <title>${escapeHtml(o.title)} - API docs</title>
  <script type="module" src="rapidoc-min.js"></script>
</head>
<body>
  <rapi-doc spec-url="${escapeHtml(spec)}" theme="${o.theme ?? 'light'}" render-style="read" show-header="false" allow-try="true" load-fonts="false"></rapi-doc>
</body>
</html>
`;
  assets.set('index.html', { text: () => html });
  return new UiMount(o.mountPath, assets, o.headers, o.missingAssets);
}

function escapeHtml(s: string): string {
  return s.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
}
