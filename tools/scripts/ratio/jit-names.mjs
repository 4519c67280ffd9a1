#!/usr/bin/env node
/**
 * Names the JIT's code in a callgrind dump: callgrind cannot name V8's generated code (it lists it
 * as `0x000000000d0d28c0` in an unknown object), but node started with `--perf-basic-prof` writes
 * /tmp/perf-<pid>.map, the start, size and name of every code object it makes. This reads both
 * and prints self instructions per function, the JIT's code under its JavaScript names (code
 * objects that move or are freed keep the name the map gave last for that address).
 *
 *   node tools/scripts/ratio/jit-names.mjs <callgrind.out> [/tmp/perf-<pid>.map] [--calls N] [--top N] [--areas]
 *
 * The map defaults to /tmp/perf-<the dump's pid>.map. `--calls N` divides every count by N (the
 * window's calls: instructions per call). `--areas` sums the functions by where they come from
 * (a package or node: module for JavaScript; V8's builtins, runtime and API; node's C++; libc;
 * llhttp; regular expressions) instead of listing them. Used with the ratio check's JIT-on
 * windows, for looking into, not for the gate:
 *
 *   RATIO_ONLY=koa RATIO_NODE_FLAGS='--perf-basic-prof --min-semi-space-size=64
 *     --max-semi-space-size=64' RATIO_WARMUP=8000 RATIO_CALLS=1000 RATIO_WINDOWS=4
 *     node --import tsx tools/scripts/ratio/ratio-check.ts
 */
import { readFileSync } from 'node:fs';

const args = process.argv.slice(2);
const option = (name, fallback) => {
  const at = args.indexOf(name);
  if (at < 0) return fallback;
  const value = Number(args[at + 1]);
  args.splice(at, 2);
  if (!Number.isFinite(value) || value <= 0) {
    process.stderr.write(`jit-names: ${name} takes a positive number\n`);
    process.exit(2);
  }
  return value;
};
const calls = option('--calls', 1);
const top = option('--top', 40);
const areasAt = args.indexOf('--areas');
const byArea = areasAt >= 0;
if (byArea) args.splice(areasAt, 1);
const [dumpFile, mapArg] = args;
if (!dumpFile) {
  process.stderr.write(
    'usage: jit-names.mjs <callgrind.out> [/tmp/perf-<pid>.map] [--calls N] [--top N] [--areas]\n',
  );
  process.exit(2);
}

/** Reads a file, or exits with a line saying which and why. */
function readText(file, what) {
  try {
    return readFileSync(file, 'utf8');
  } catch (err) {
    process.stderr.write(`jit-names: cannot read ${what} ${file}: ${err.message}\n`);
    process.exit(2);
  }
}

const dump = readText(dumpFile, 'the callgrind dump').split('\n');
const pid = dump.find((l) => l.startsWith('pid: '))?.slice(5);
const mapFile = mapArg ?? `/tmp/perf-${pid}.map`;

/** The map's code objects, sorted by start; a later entry for the same start replaces the earlier. */
function readMap(file) {
  const byStart = new Map();
  const text = readText(
    file,
    'the perf map (node --perf-basic-prof writes it; the process must have run with it)',
  );
  for (const line of text.split('\n')) {
    const m = /^([0-9a-f]+) ([0-9a-f]+) (.*)$/i.exec(line);
    if (m) byStart.set(BigInt(`0x${m[1]}`), { size: BigInt(`0x${m[2]}`), name: m[3] });
  }
  return [...byStart]
    .map(([start, v]) => ({ start, ...v }))
    .sort((a, b) => (a.start < b.start ? -1 : 1));
}

function nameAt(code, address) {
  let lo = 0;
  let hi = code.length - 1;
  while (lo <= hi) {
    const mid = (lo + hi) >> 1;
    if (code[mid].start <= address) lo = mid + 1;
    else hi = mid - 1;
  }
  const c = code[hi];
  return c && address < c.start + c.size ? c.name : undefined;
}

/** Self instructions per callgrind function name (a cost line after `calls=` is the call's, not self). */
function selfCosts(lines) {
  const names = new Map();
  const costs = new Map();
  let fn = '';
  let callLine = false;
  const named = (field) => {
    const m = /^\((\d+)\)(?: (.*))?$/.exec(field);
    if (!m) return field;
    if (m[2] !== undefined) names.set(m[1], m[2]);
    return names.get(m[1]) ?? field;
  };
  for (const line of lines) {
    if (line.startsWith('fn=')) fn = named(line.slice(3));
    else if (line.startsWith('cfn=')) named(line.slice(4));
    else if (line.startsWith('calls=')) callLine = true;
    else if (/^[+\-*\d]/.test(line)) {
      const ir = Number(line.split(' ')[1] ?? 0);
      if (callLine) callLine = false;
      else costs.set(fn, (costs.get(fn) ?? 0) + ir);
    }
  }
  return costs;
}

/** Where a named function comes from (for --areas). */
function areaOf(name) {
  if (name.startsWith('RegExp:')) return 'regular expressions (their code)';
  if (name.startsWith('Builtins_RegExp')) return 'V8 builtins: RegExp';
  if (name.startsWith('Builtins_String')) return 'V8 builtins: String';
  if (/^Builtins_(Keyed)?(Load|Store)(Global)?IC/.test(name)) return 'V8 builtins: property ICs';
  if (name.startsWith('Builtins_')) return 'V8 builtins: other';
  // The last word is the script (its line and column after it); a getter's name has a space.
  const js = /^JS:.* (\S+?)(?::\d+)*$/.exec(name);
  if (js) {
    const url = js[1];
    if (url.startsWith('node:'))
      return `JS ${url.replace(/^node:(internal\/)?/, 'node:').replace(/\/.*$/, '')}`;
    const nm = /node_modules\/((?:@[^/]+\/)?[^/]+)/.exec(url);
    if (nm) return `JS ${nm[1]}`;
    const lib = /\/libs\/([^/]+)\//.exec(url);
    if (lib) return `JS @svcboot/${lib[1]}`;
    return `JS ${url.replace(/^.*\//, '')}`;
  }
  if (name.startsWith('JS:') || name.startsWith('Script:')) return 'JS (other)';
  if (/^(void |unsigned |bool |int )?v8::internal::/.test(name) || name.includes(' v8::internal::'))
    return 'V8 runtime (C++)';
  if (name.startsWith('v8::') || / v8::/.test(name)) return 'V8 API (C++)';
  if (name.includes('node::')) return 'node (C++)';
  if (name.startsWith('llhttp')) return 'llhttp';
  if (
    name.startsWith('__') ||
    name.startsWith('_int_') ||
    /^(malloc|free|memcpy|memset|memmove|strlen)/.test(name)
  )
    return 'libc';
  return 'other native';
}

const code = readMap(mapFile);
const totals = new Map();
let total = 0;
let unnamed = 0;
for (const [fn, ir] of selfCosts(dump)) {
  total += ir;
  let name = fn;
  if (/^0x[0-9a-f]+$/i.test(fn)) {
    const named = nameAt(code, BigInt(fn));
    if (named === undefined) unnamed += ir;
    name = named ?? 'JIT code the map does not cover';
  }
  const key = byArea ? areaOf(name) : name;
  totals.set(key, (totals.get(key) ?? 0) + ir);
}
const rows = [...totals].sort((a, b) => b[1] - a[1]).slice(0, top);
const per = (n) => Math.round(n / calls).toLocaleString('en');
const lines = [
  `${dumpFile}: ${per(total)} instructions${calls > 1 ? ' per call' : ''} (map ${mapFile}, ${code.length} code objects; not covered ${per(unnamed)})`,
];
for (const [name, ir] of rows)
  lines.push(`${per(ir).padStart(10)}  ${((100 * ir) / total).toFixed(1).padStart(5)} %  ${name}`);
// A reader that stops early (| head) is no error.
process.stdout.on('error', (err) => {
  if (err.code !== 'EPIPE') throw err;
});
process.stdout.write(`${lines.join('\n')}\n`);
