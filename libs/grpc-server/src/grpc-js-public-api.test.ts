import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

/**
 * A guard (issue 38): the entry uses grpc-js through its public API only. grpc-js's private and
 * protected members (its Server's `http2Servers` map of HTTP/2 servers, a call's HTTP/2 `stream`,
 * its `serializeMessage`…) change without notice between its minor versions, and reading them made
 * features fail silently when they did. This scans the package's own source (not its tests) for
 * reads of them; the behaviour under `server: grpc-js` is tested by the files in
 * server-variants.tests run with SVC_GRPC_SERVER=grpc-js.
 */

const SRC = path.dirname(fileURLToPath(import.meta.url));
/** Every package of the monorepo: this one's files may move to packages of their own. */
const LIBS = path.resolve(SRC, '../..');
const require = createRequire(import.meta.url);
const GRPC_JS_BUILD = path.dirname(require.resolve('@grpc/grpc-js'));

/** grpc-js's classes whose members the entry could reach: its server and its server calls. */
const CLASSES = ['Server', 'BaseServerInterceptingCall', 'ServerInterceptingCall'];

/**
 * Private and protected members of `CLASSES`, as grpc-js's own declarations (.d.ts) say. Where
 * two classes of the same name exist (none today), both count.
 */
function grpcJsPrivateMembers(): Set<string> {
  const names = new Set<string>();
  for (const file of readdirSync(GRPC_JS_BUILD)) {
    if (!file.endsWith('.d.ts')) continue;
    const text = readFileSync(path.join(GRPC_JS_BUILD, file), 'utf8');
    for (const cls of CLASSES) {
      const start = text.search(new RegExp(`\\bclass ${cls}\\b[^{]*\\{`));
      if (start < 0) continue;
      // The class body: up to the first line that closes it (declarations are one level deep).
      const end = text.indexOf('\n}', start);
      const body = text.slice(start, end < 0 ? undefined : end);
      for (const m of body.matchAll(
        /^\s+(?:private|protected)\s+(?:readonly\s+)?([A-Za-z_$][\w$]*)/gm,
      ))
        names.add(m[1]!);
    }
  }
  return names;
}

/**
 * Names grpc-js keeps private that the entry's own objects also have (its node:http2 server's
 * `sessions`, a call's `stream`, `deadline`, `metadata`, its own interceptors' `cancelled`…): a
 * property of that name is not a read of grpc-js's. Reads of these on grpc-js's objects are still
 * caught where they hide: by a string key (`c['stream']`) or on a prototype (rules below).
 */
const SHARED_NAMES = new Set([
  'sessions',
  'handlers',
  'options',
  'listener',
  'metadata',
  'stream',
  'handler',
  'cancelled',
  'deadline',
  'host',
  'started',
  'shutdown',
  'interceptors',
  'keepaliveTimeMs',
  'keepaliveTimeoutMs',
  'maxConnectionAgeMs',
  'maxConnectionAgeGraceMs',
  'deadlineTimer',
  'incomingEncoding',
  'metadataSent',
  'streamEnded',
  'closeSession',
  'trace',
  'decoder',
  'readQueue',
  'wantTrailers',
  'isReadPending',
  'receivedHalfClose',
  'connectionInfo',
  'metricsRecorder',
  'onStreamClose',
  'next',
  'responder',
]);

/** Source without its comments (a comment may name what it does not read). */
function code(text: string): string {
  return text.replace(/\/\*[\s\S]*?\*\//g, '').replace(/(^|[^:'"`\\])\/\/.*$/gm, '$1');
}

/**
 * The one use of grpc-js's build files allowed: grpc-typed's `Metadata` and status codes from their
 * own modules, so that a start does not load grpc-js's whole client and server (~25 ms). These are
 * classes and constants, not private members, and `partsOf` loads the index instead when an upgrade
 * moves them (its test checks both ways), so nothing fails silently.
 */
const BUILD_MODULES_ALLOWED = new Set([
  "grpc-typed/src/grpc-js.ts: export const METADATA_MODULE = '@grpc/grpc-js/build/src/metadata.js';",
  "grpc-typed/src/grpc-js.ts: export const STATUS_MODULE = '@grpc/grpc-js/build/src/constants.js';",
]);

export interface Finding {
  file: string;
  line: number;
  rule: string;
  text: string;
}

/** What in `text` (one source file) reads grpc-js's internals. */
export function scan(file: string, text: string, privates: Set<string>): Finding[] {
  const found: Finding[] = [];
  const lines = code(text).split('\n');
  const importsGrpcJs = /from '@grpc\/grpc-js'/.test(text);
  const distinct = [...privates].filter((n) => !SHARED_NAMES.has(n));
  const member = new RegExp(
    `(\\.|\\?\\.)(${distinct.map((n) => n.replace(/\$/g, '\\$')).join('|')})\\b|\\b(${distinct
      .map((n) => n.replace(/\$/g, '\\$'))
      .join('|')})\\??\\s*:`,
  );
  // Not a type's (`Options['metadata']`): a value's, read by its name.
  const stringKey = new RegExp(
    `(?<!\\b[A-Z][\\w$]*)\\[\\s*['"\`](${[...privates].join('|')})['"\`]\\s*\\]`,
  );
  lines.forEach((l, i) => {
    const at = (rule: string): void => {
      found.push({ file, line: i + 1, rule, text: l.trim() });
    };
    if (distinct.length > 0 && member.test(l)) at('a private member of grpc-js');
    if (stringKey.test(l)) at("a private member of grpc-js by its name (obj['name'])");
    if (/@grpc\/grpc-js\/build\//.test(l) && !BUILD_MODULES_ALLOWED.has(`${file}: ${l.trim()}`))
      at("grpc-js's internal modules");
    if (importsGrpcJs && /Object\.getPrototypeOf\(|\.prototype\.\w+\s*=/.test(l))
      at("a grpc-js class's prototype");
  });
  return found;
}

function sourceFiles(dir: string): string[] {
  const out: string[] = [];
  for (const e of readdirSync(dir, { withFileTypes: true })) {
    const p = path.join(dir, e.name);
    if (e.isDirectory()) {
      if (e.name !== 'test-support') out.push(...sourceFiles(p));
    } else if (e.name.endsWith('.ts') && !e.name.endsWith('.test.ts')) out.push(p);
  }
  return out;
}

describe('grpc-js through its public API only', () => {
  const privates = grpcJsPrivateMembers();

  it("finds grpc-js's private members in its declarations", () => {
    // What the entry used to read: if these are gone from grpc-js, the list below is stale.
    for (const name of ['http2Servers', 'sessions', 'handlers', 'stream', 'serializeMessage'])
      expect(privates, name).toContain(name);
    for (const name of SHARED_NAMES)
      expect(privates.has(name) || ['next', 'responder'].includes(name), name).toBe(true);
  });

  it('no file of the package (tests aside) reads them', () => {
    const findings = sourceFiles(SRC).flatMap((f) =>
      scan(path.relative(SRC, f), readFileSync(f, 'utf8'), privates),
    );
    expect(findings).toEqual([]);
  });

  it('nor does any other package of libs/ that uses grpc-js (where its server code may move)', () => {
    const findings = readdirSync(LIBS, { withFileTypes: true })
      .filter((d) => d.isDirectory())
      .map((d) => path.join(LIBS, d.name, 'src'))
      .filter((dir) => dir !== SRC && existsSync(dir))
      .flatMap((dir) => sourceFiles(dir))
      .filter((f) => /from '@grpc\/grpc-js'/.test(readFileSync(f, 'utf8')))
      .flatMap((f) => scan(path.relative(LIBS, f), readFileSync(f, 'utf8'), privates));
    expect(findings).toEqual([]);
  });

  it('would have found each read the entry used to make', () => {
    // The reads removed for issue 38, as they were written.
    const removed: Array<[string, string]> = [
      [
        'refused-calls.ts',
        'const servers = (server as unknown as ServerInternals).http2Servers;\ninterface ServerInternals {\n  http2Servers?: Map<http2.Http2Server, unknown>;\n}',
      ],
      ['route-streams.ts', 'const servers = (server as { http2Servers?: unknown }).http2Servers;'],
      [
        'grpc-compression.ts',
        'const base = call as unknown as BaseCall;\nbase.serializeMessage = (value: unknown): Buffer => raw;',
      ],
      [
        'request-message-timeout.ts',
        "const stream = c['stream'] as Partial<http2.ServerHttp2Stream> | undefined;\nc = (c['nextCall'] ?? c['next']) as Record<string, unknown> | undefined;",
      ],
      [
        'interceptor.ts',
        "import { Metadata } from '@grpc/grpc-js';\npatchSendStatus(Object.getPrototypeOf(call) as object);",
      ],
    ];
    for (const [file, text] of removed)
      expect(scan(file, text, privates).length, file).toBeGreaterThan(0);
    // Comments naming them are not reads.
    expect(scan('x.ts', '// grpc-js keeps http2Servers private\n', privates)).toEqual([]);
  });
});
