/**
 * Fuzzes the REST gateway's request parsers with fast-check and reports, per parser, the worst
 * CPU time one input took and that input's size: what a hostile request can cost (issue 18,
 * point 2). A benchmark, not a test: it asserts nothing, it measures. Inputs are random and
 * biased toward what makes parsers slow (deep brackets, many `&`, `%` escapes, long paths
 * under `**` templates), within the sizes a request can have (the body limit, Node's 16 KiB
 * header limit for URLs and headers).
 *
 *   node --import tsx bench/fuzz/parsers.ts [runs per parser, default 300] [seed]
 *
 * It imports the gateway's sources (the parsers are not part of the package's API).
 */
import fc from 'fast-check';
import {
  checkJsonDepth,
  DEFAULT_MAX_JSON_DEPTH,
} from '../../libs/grpc-server/src/protojson/json-depth.js';
import { JsonValueSplitter } from '../../libs/grpc-gateway/src/json-stream.js';
import { DEFAULT_MAX_QUERY_PARAMS, parseQueryInto } from '../../libs/grpc-gateway/src/goparse.js';
import { compileTemplate } from '../../libs/grpc-gateway/src/template.js';
import { metadataFromHeaders } from '../../libs/grpc-gateway/src/headers.js';

const runs = Number(process.argv[2] ?? 300);
const seed = process.argv[3] === undefined ? Date.now() % 2 ** 31 : Number(process.argv[3]);
const BODY_MAX = 4 * 1024 * 1024;
const URL_MAX = 16 * 1024;

/** CPU time (user + system) of one call, in ms. */
function cpuMs(f: () => void): number {
  const start = process.cpuUsage();
  try {
    f();
  } catch {
    // Refusals are the point; only their cost is measured.
  }
  const d = process.cpuUsage(start);
  return (d.user + d.system) / 1000;
}

/** A string made by repeating pieces drawn from `alphabet` (pieces, so long runs are likely). */
function piecesOf(alphabet: string[], maxPieces: number, maxRepeat: number): fc.Arbitrary<string> {
  return fc
    .array(fc.tuple(fc.constantFrom(...alphabet), fc.integer({ min: 1, max: maxRepeat })), {
      maxLength: maxPieces,
    })
    .map((ps) => ps.map(([s, n]) => s.repeat(n)).join(''));
}

interface Target {
  name: string;
  input: fc.Arbitrary<string>;
  run(input: string): void;
}

const jsonPieces = [
  '[',
  ']',
  '{',
  '}',
  '{"a":',
  '"',
  '\\',
  '\\"',
  ',',
  '1',
  'null',
  ' ',
  '"x"',
  '[{"k":[',
  ']}]',
];
const queryPieces = [
  '&',
  '=',
  'a',
  'tags',
  '%',
  '%2',
  '%41',
  '+',
  ';',
  'k=v&',
  'filter.author_name=',
  '%zz',
  'é',
];
const pathPieces = ['/', 'x', 'a/', '%2F', '%', '%41', ':', ':verb', '//', 'shelves/', 'books/'];
const templates = [
  '/v1/{path=**}',
  '/v1/{name=shelves/*}/books/{id}:publish',
  '/v1/{a=*}/x/{b=**}:verb',
  '/v1/{path=**}:custom:custom',
].map((t) => compileTemplate(t, 'fuzz'));

const targets: Target[] = [
  {
    name: `JSON body: depth check (bound ${DEFAULT_MAX_JSON_DEPTH}) then JSON.parse`,
    input: piecesOf(jsonPieces, 200, 20_000).filter((s) => s.length <= BODY_MAX),
    run(s) {
      checkJsonDepth(s, DEFAULT_MAX_JSON_DEPTH, 'body');
      JSON.parse(s);
    },
  },
  {
    name: 'streamed JSON messages (JsonValueSplitter)',
    input: piecesOf(jsonPieces, 200, 20_000).filter((s) => s.length <= BODY_MAX),
    run(s) {
      new JsonValueSplitter(BODY_MAX, DEFAULT_MAX_JSON_DEPTH).end(s);
    },
  },
  {
    name: `query string (bound ${DEFAULT_MAX_QUERY_PARAMS} parameters)`,
    input: piecesOf(queryPieces, 300, 3_000).filter((s) => s.length <= URL_MAX),
    run(s) {
      parseQueryInto(s, new Map(), {
        left: DEFAULT_MAX_QUERY_PARAMS,
        max: DEFAULT_MAX_QUERY_PARAMS,
      });
    },
  },
  {
    name: 'path templates with * and ** (4 templates matched)',
    input: piecesOf(pathPieces, 300, 2_000)
      .filter((s) => s.length <= URL_MAX)
      .map((s) => `/v1/${s}`),
    run(s) {
      for (const t of templates) t.match(s);
    },
  },
  {
    name: 'headers to metadata (grpc-gateway and svc styles)',
    input: fc
      .array(
        fc.tuple(
          fc.constantFrom(
            'grpc-metadata-a',
            'x-b-bin',
            'authorization',
            'user-agent',
            'x-forwarded-for',
            'host',
            'x-custom',
          ),
          fc.string({ maxLength: 200 }),
        ),
        { maxLength: 2000 },
      )
      .map((pairs) => JSON.stringify(pairs)),
    run(s) {
      const headers: Record<string, string | string[]> = {};
      for (const [k, v] of JSON.parse(s) as Array<[string, string]>) {
        const prev = headers[k];
        headers[k] = prev === undefined ? v : Array.isArray(prev) ? [...prev, v] : [prev, v];
      }
      metadataFromHeaders(headers, false, '127.0.0.1');
      metadataFromHeaders(headers, true, '127.0.0.1');
    },
  },
];

console.log(`> fuzz: ${runs} random inputs per parser, seed ${seed}, Node ${process.version}`);
console.log(
  '| parser | inputs | worst CPU ms per input | its size (chars) | CPU µs per KiB at worst | median CPU ms |',
);
console.log('|---|---:|---:|---:|---:|---:|');
for (const t of targets) {
  // Warm-up, so the worst case is the parser's and not the compiler's first pass over it.
  for (const input of fc.sample(t.input, { numRuns: 30, seed: seed + 1 }))
    cpuMs(() => t.run(input));
  const times: number[] = [];
  let worst = { ms: -1, size: 0 };
  fc.assert(
    fc.property(t.input, (input) => {
      const ms = cpuMs(() => t.run(input));
      times.push(ms);
      if (ms > worst.ms) worst = { ms, size: input.length };
    }),
    { numRuns: runs, seed },
  );
  times.sort((a, b) => a - b);
  const perKiB = worst.size === 0 ? 0 : (worst.ms * 1000) / (worst.size / 1024);
  console.log(
    `| ${t.name} | ${times.length} | ${worst.ms.toFixed(2)} | ${worst.size} | ${perKiB.toFixed(0)} | ${times[times.length >> 1]!.toFixed(3)} |`,
  );
}
