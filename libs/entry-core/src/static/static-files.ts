import { constants, type Stats } from 'node:fs';
import type { FileHandle } from 'node:fs/promises';
import type { IncomingMessage, ServerResponse } from 'node:http';
import path from 'node:path';
import { pipeline } from 'node:stream/promises';
import { coreError } from '../errors.js';
import {
  methodNotAllowed,
  sendError,
  sendText,
  type HttpRoute,
  type RouteErrors,
  PLAIN_ERRORS,
} from '../http/route.js';
import { contentTypeOf } from './content-types.js';

/** node:fs/promises, loaded on first use: a start that serves no file does not load it. */
const fsp = (): typeof import('node:fs/promises') => process.getBuiltinModule('node:fs/promises');

export interface StaticFilesOptions {
  /** `/static/` (with its trailing slash). */
  path: string;
  /** The folder served, as configured (relative to `cwd`). */
  sourcePath: string;
  listing: boolean;
  /** `grpc[api].static`, for errors. */
  configPath: string;
  cwd?: string;
}

const GET_HEAD = ['GET', 'HEAD'];
/** Files up to this size are read in one go and sent whole; larger ones are streamed. */
const WHOLE_READ_BYTES = 256 * 1024;
const NOT_FOUND = 'not found';

/**
 * The files of one local folder under `path`, GET and HEAD only:
 * - the URL path is percent-decoded once; a NUL, a backslash or a malformed escape is 400; a
 *   segment starting with `.` (`..`, `.env`) is 404, and so is anything whose real path (after
 *   symlinks) is outside the folder: no spelling reaches a file outside it;
 * - `Content-Type` from the extension, `Content-Length`, `ETag` and `Last-Modified`, 304 for a
 *   matching `If-None-Match` (or, without one, `If-Modified-Since`);
 * - a folder is 404 unless `listing` is on (then an HTML list of its files, dotfiles left out).
 */
export class StaticFiles implements HttpRoute {
  private readonly folderPath: string;

  private constructor(
    private readonly prefix: string,
    /** The folder's real path (symlinks resolved). */
    private readonly root: string,
    private readonly listing: boolean,
  ) {
    this.folderPath = prefix.slice(0, -1);
  }

  /** Checks the folder exists (SVC_STATIC_SOURCE otherwise) and resolves its real path. */
  static async open(options: StaticFilesOptions): Promise<StaticFiles> {
    const wanted = path.resolve(options.cwd ?? process.cwd(), options.sourcePath);
    let root: string;
    try {
      root = await fsp().realpath(wanted);
      if (!(await fsp().stat(root)).isDirectory())
        throw coreError('SVC_STATIC_SOURCE', [options.configPath, wanted, 'not a folder']);
    } catch (err) {
      if ((err as { code?: string }).code === 'SVC_STATIC_SOURCE') throw err;
      const reason = (err as NodeJS.ErrnoException).code ?? (err as Error).message;
      throw coreError('SVC_STATIC_SOURCE', [options.configPath, wanted, reason], { cause: err });
    }
    return new StaticFiles(options.path, root, options.listing);
  }

  match(pathname: string): string | undefined {
    if (pathname.startsWith(this.prefix) || pathname === this.folderPath) return `${this.prefix}*`;
    return undefined;
  }

  async serve(
    req: IncomingMessage,
    res: ServerResponse,
    pathname: string,
    errors: RouteErrors = PLAIN_ERRORS,
  ): Promise<void> {
    if (req.method !== 'GET' && req.method !== 'HEAD')
      return methodNotAllowed(req, res, errors, GET_HEAD);
    const rel = pathname.length > this.prefix.length ? pathname.slice(this.prefix.length) : '';
    let decoded: string;
    try {
      decoded = decodeURIComponent(rel);
    } catch {
      return sendError(req, res, errors, 400, 'malformed percent-encoding in the path');
    }
    if (decoded.includes('\0') || decoded.includes('\\'))
      return sendError(req, res, errors, 400, 'the path may not contain NUL or backslash');
    const segments = decoded.split('/').filter((s) => s !== '');
    if (segments.some((s) => s.startsWith('.'))) return sendError(req, res, errors, 404, NOT_FOUND);
    const file = await this.resolve(segments);
    if (file === undefined) return sendError(req, res, errors, 404, NOT_FOUND);
    let handle: FileHandle;
    try {
      // O_NONBLOCK: a FIFO in the folder must not hold a libuv thread until a writer comes.
      handle = await fsp().open(file, constants.O_RDONLY | (constants.O_NONBLOCK ?? 0));
    } catch {
      return sendError(req, res, errors, 404, NOT_FOUND);
    }
    let handed = false;
    try {
      const stats = await handle.stat();
      if (stats.isDirectory()) {
        if (!this.listing) return sendError(req, res, errors, 404, NOT_FOUND);
        return await this.list(req, res, file, segments);
      }
      if (!stats.isFile()) return sendError(req, res, errors, 404, NOT_FOUND);
      const etag = `"${stats.size.toString(16)}-${Math.floor(stats.mtimeMs).toString(16)}"`;
      res.setHeader('ETag', etag);
      res.setHeader('Last-Modified', stats.mtime.toUTCString());
      if (notModified(req, etag, stats)) {
        res.statusCode = 304;
        res.end();
        return;
      }
      res.statusCode = 200;
      res.setHeader('Content-Type', contentTypeOf(file));
      res.setHeader('X-Content-Type-Options', 'nosniff');
      if (req.method === 'HEAD') {
        res.setHeader('Content-Length', stats.size);
        res.end();
        return;
      }
      if (stats.size <= WHOLE_READ_BYTES) {
        // One read instead of a stream: several times the requests per second for small files.
        const body = await readWhole(handle, stats.size);
        res.setHeader('Content-Length', body.length);
        res.end(body);
        return;
      }
      res.setHeader('Content-Length', stats.size);
      handed = true;
      await pipeline(handle.createReadStream({ autoClose: true }), res).catch(() => {
        // The client went away, or the file could not be read after the headers: nothing to answer.
        if (!res.writableEnded) res.destroy();
      });
    } finally {
      if (!handed) await handle.close();
    }
  }

  /** The real path of `segments` under the folder, or undefined when missing or outside it. */
  private async resolve(segments: readonly string[]): Promise<string | undefined> {
    const candidate = path.join(this.root, ...segments);
    if (!this.inside(candidate)) return undefined;
    try {
      const real = await fsp().realpath(candidate);
      return this.inside(real) ? real : undefined;
    } catch {
      return undefined;
    }
  }

  private inside(p: string): boolean {
    return p === this.root || p.startsWith(this.root + path.sep);
  }

  private async list(
    req: IncomingMessage,
    res: ServerResponse,
    folder: string,
    segments: readonly string[],
  ): Promise<void> {
    const entries = (await fsp().readdir(folder, { withFileTypes: true }))
      .filter((e) => !e.name.startsWith('.'))
      .sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
    const base = this.prefix + segments.map((s) => `${encodeURIComponent(s)}/`).join('');
    const title = escapeHtml(`/${segments.join('/')}`);
    const items = entries
      .map((e) => {
        const name = e.isDirectory() ? `${e.name}/` : e.name;
        const href = base + encodeURIComponent(e.name) + (e.isDirectory() ? '/' : '');
        return `<li><a href="${escapeHtml(href)}">${escapeHtml(name)}</a></li>`;
      })
      .join('\n');
    const body = `<!doctype html>\n<html><head><meta charset="utf-8"><title>${title}</title></head>\n<body><h1>${title}</h1>\n<ul>\n${items}\n</ul></body></html>\n`;
    sendText(req, res, 200, body, 'text/html; charset=utf-8', {
      'X-Content-Type-Options': 'nosniff',
    });
  }
}

/** The first `size` bytes of the file (fewer if it shrank since its stat). */
async function readWhole(handle: FileHandle, size: number): Promise<Buffer> {
  const buf = Buffer.allocUnsafe(size);
  let got = 0;
  while (got < size) {
    const { bytesRead } = await handle.read(buf, got, size - got, got);
    if (bytesRead === 0) break;
    got += bytesRead;
  }
  return got === size ? buf : buf.subarray(0, got);
}

/** A matching `If-None-Match` (weak comparison), or, without one, an `If-Modified-Since` not before the file's time. */
function notModified(req: IncomingMessage, etag: string, stats: Stats): boolean {
  const inm = req.headers['if-none-match'];
  if (inm !== undefined) {
    return inm.split(',').some((t) => {
      const tag = t.trim();
      return tag === '*' || (tag.startsWith('W/') ? tag.slice(2) : tag) === etag;
    });
  }
  const ims = req.headers['if-modified-since'];
  if (ims === undefined) return false;
  const since = Date.parse(ims);
  return !Number.isNaN(since) && Math.floor(stats.mtimeMs / 1000) * 1000 <= since;
}

function escapeHtml(s: string): string {
  return s
    .replace(/&/g, '&amp;')
    .replace(/</g, '&lt;')
    .replace(/>/g, '&gt;')
    .replace(/"/g, '&quot;')
    .replace(/'/g, '&#39;');
}
