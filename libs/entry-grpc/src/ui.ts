import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { ServerResponse } from 'node:http';

/**
 * The package's assets/ folder (next to src/ and dist/, so the same from sources and from the
 * build): the UI files taken from the pinned rapidoc and swagger-ui-dist tarballs at build time
 * (scripts/ui-packages.mjs, scripts/copy-ui-assets.mjs), shipped in the package instead of
 * depending on those packages.
 */
const ASSETS_DIR = fileURLToPath(new URL('../assets/', import.meta.url));

function assetDir(ui: 'rapidoc' | 'swagger-ui'): string {
  return path.join(ASSETS_DIR, ui);
}

const TYPES: Record<string, string> = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'application/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.png': 'image/png',
  '.json': 'application/json',
};

interface Asset {
  /** A file under assets/, read once and kept. */
  file?: string;
  /** Or content made here. */
  text?: () => string;
}

/**
 * A UI mounted at a folder path (`/sw/`), serving only the files it names: request paths are
 * looked up in a fixed table, so `..` or encoded separators can never reach the file system.
 */
export class UiMount {
  private readonly cache = new Map<string, Buffer>();
  constructor(
    readonly mountPath: string,
    private readonly assets: ReadonlyMap<string, Asset>,
  ) {}

  /** True when the path belongs to this mount (it then answers, 404 included). */
  async serve(pathname: string, res: ServerResponse): Promise<boolean> {
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
      body = asset.file ? await readAsset(asset.file) : Buffer.from(asset.text!(), 'utf8');
      if (asset.file) this.cache.set(name, body);
    }
    res.statusCode = 200;
    res.setHeader('Content-Type', TYPES[path.extname(name)] ?? 'application/octet-stream');
    res.setHeader('Cache-Control', 'no-cache');
    res.end(body);
    return true;
  }
}

/** An asset's bytes; a missing file is a build without assets, said so (Koa answers 500 and the entry logs it). */
async function readAsset(file: string): Promise<Buffer> {
  try {
    return await readFile(file);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
    throw new Error(
      `the UI file ${file} is missing: this copy of @svcboot/entry-grpc was built without its assets/ folder. ` +
        'In the svcboot workspace run `npm run build -w @svcboot/entry-grpc` (it takes the files from the pinned rapidoc and swagger-ui-dist tarballs); a published package always ships them',
    );
  }
}

const SPEC_FILE = 'swagger.json';
/** The OpenAPI 3.1 document beside the 2.0 one. */
const SPEC_V3_FILE = 'openapi.json';

/**
 * Swagger UI (the files of swagger-ui-dist, from assets/) at `mountPath`, showing the entry's
 * OpenAPI documents: 2.0 (`swagger.json`) first and, when there is one, 3.1 (`openapi.json`) to
 * pick from the top bar.
 */
export function swaggerUi(
  mountPath: string,
  document: () => string,
  title: string,
  documentV3?: () => string,
): UiMount {
  const dir = assetDir('swagger-ui');
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
  assets.set(SPEC_FILE, { text: document });
  if (documentV3) assets.set(SPEC_V3_FILE, { text: documentV3 });
  const source = (file: string): string =>
    `new URL(${JSON.stringify(file)}, window.location.href).href`;
  const specs = documentV3
    ? `urls: [{ url: ${source(SPEC_FILE)}, name: 'OpenAPI 2.0 (swagger.json)' }, { url: ${source(SPEC_V3_FILE)}, name: 'OpenAPI 3.1 (openapi.json)' }],\n    'urls.primaryName': 'OpenAPI 2.0 (swagger.json)',`
    : `url: ${source(SPEC_FILE)},`;
  assets.set('swagger-initializer.js', {
    text: () =>
      `window.onload = function () {\n  window.ui = SwaggerUIBundle({\n    ${specs}\n    dom_id: '#swagger-ui',\n    deepLinking: true,\n    validatorUrl: null,\n    presets: [SwaggerUIBundle.presets.apis, SwaggerUIStandalonePreset],\n    plugins: [SwaggerUIBundle.plugins.DownloadUrl],\n    layout: 'StandaloneLayout',\n  });\n};\n`,
  });
  const html = `<!doctype html>
<html lang="en">
<head>
  <meta charset="utf-8">
  <title>${escapeHtml(title)} - Swagger UI</title>
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
  return new UiMount(mountPath, assets);
}

/** RapiDoc (rapidoc-min.js, from assets/) at `mountPath`, on the OpenAPI 2.0 document; the 3.1 one is served beside it. */
export function rapiDoc(
  mountPath: string,
  document: () => string,
  title: string,
  documentV3?: () => string,
): UiMount {
  const dir = assetDir('rapidoc');
  const assets = new Map<string, Asset>([
    ['rapidoc-min.js', { file: path.join(dir, 'rapidoc-min.js') }],
    [SPEC_FILE, { text: document }],
  ]);
  if (documentV3) assets.set(SPEC_V3_FILE, { text: documentV3 });
  const html = `<!doctype html>
<html lang="en">
<head>
  <meta charset="utf-8">
  <title>${escapeHtml(title)} - API docs</title>
  <script type="module" src="rapidoc-min.js"></script>
</head>
<body>
  <rapi-doc spec-url="${SPEC_FILE}" render-style="read" show-header="false" allow-try="true" load-fonts="false"></rapi-doc>
</body>
</html>
`;
  assets.set('index.html', { text: () => html });
  return new UiMount(mountPath, assets);
}

function escapeHtml(s: string): string {
  return s.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
}
