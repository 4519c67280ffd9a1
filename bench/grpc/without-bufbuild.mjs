/**
 * A counterfactual for grpc/start.ts: what an untyped service's start would cost if it loaded no
 * @bufbuild/protobuf module (nor grpc-typed's generated google.rpc files). Measurement only: the
 * app it runs under is not a working gRPC server for typed services.
 *
 * 1. `node grpc/without-bufbuild.mjs` (from bench/) writes, to the temp folder, the export names
 *    of every ES module of @bufbuild/protobuf and of grpc-typed's dist/gen/.
 * 2. `BENCH_NODE_FLAGS="--import ./grpc/without-bufbuild.mjs" node --import tsx grpc/start.ts`
 *    (absolute path if needed) runs every start with an ES load hook: with BUFBUILD_STUB=1 each of
 *    those modules is replaced by one with the same export names, no imports and no work (every
 *    name one inert Proxy, so the code evaluated on load runs); with BUFBUILD_STUB=0 the hook only
 *    passes through. Compare 0 against 1, interleaved: the hook's own cost per module is in both
 *    and inflates the CPU saving (each stubbed module also skips the hook).
 */
import { readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { register } from 'node:module';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { isMainThread } from 'node:worker_threads';

const NAMES = path.join(os.tmpdir(), 'svcboot-without-bufbuild-names.json');
const here = path.dirname(fileURLToPath(import.meta.url));

/** Every `.js` file under `dir`. */
const walk = (dir) =>
  readdirSync(dir).flatMap((n) => {
    const p = path.join(dir, n);
    return statSync(p).isDirectory() ? walk(p) : p.endsWith('.js') ? [p] : [];
  });

let names = {};
if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  // Step 1: the names, from the real modules.
  const roots = [
    path.join(here, '../../node_modules/@bufbuild/protobuf/dist/esm'),
    path.join(here, '../../libs/grpc-typed/dist/gen'),
  ];
  const out = {};
  for (const root of roots)
    for (const file of walk(root)) {
      const url = pathToFileURL(file).href;
      out[url] = Object.keys(await import(url));
    }
  writeFileSync(NAMES, JSON.stringify(out));
  console.log(`${Object.keys(out).length} modules' export names → ${NAMES}`);
} else if (isMainThread) {
  // Step 2, the app's thread: the same file as the hooks module.
  register(import.meta.url);
} else {
  // The hooks thread.
  names = JSON.parse(readFileSync(NAMES, 'utf8'));
}

const STUB =
  'const f = new Proxy(function () {}, { get: (t, k) => (k === "prototype" ? {} : k === Symbol.toPrimitive ? () => "" : k === Symbol.iterator ? function* () {} : f), apply: () => f, construct: () => ({}) });\n';

/** The load hook: a stub for the listed modules when BUFBUILD_STUB=1. */
export async function load(url, context, next) {
  const list = names[url];
  if (process.env.BUFBUILD_STUB === '1' && list) {
    const named = list.filter((n) => n !== 'default');
    const source =
      STUB +
      (named.length > 0 ? `export const ${named.map((n) => `${n} = f`).join(', ')};\n` : '') +
      (list.includes('default') ? 'export default f;\n' : '');
    return { format: 'module', source, shortCircuit: true };
  }
  return next(url, context);
}
