/**
 * The top frames of a V8 CPU profile (`node --cpu-prof`): self time per function (name, file,
 * line), and the share of the whole; `(garbage collector)` and `(program)` included, `(idle)` left
 * out. Samples are counted, not their time deltas: the last sample's delta holds the time the
 * profiler took to stop.
 */
import { readFile } from 'node:fs/promises';
import path from 'node:path';

interface ProfileNode {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
  hitCount?: number;
}
interface Profile {
  nodes: ProfileNode[];
  samples: number[];
}

export interface Frame {
  name: string;
  where: string;
  selfPct: number;
}

/** Where a file is, short: the package and file for node_modules, the lib path for svcboot's. */
function shortUrl(url: string): string {
  if (url === '') return '';
  const p = url.replace(/^file:\/\//, '');
  const nm = p.lastIndexOf('node_modules/');
  if (nm >= 0) return p.slice(nm + 'node_modules/'.length);
  const libs = p.indexOf('/libs/');
  if (libs >= 0) return p.slice(libs + 1);
  return path.basename(p);
}

/** Where a frame's code lives, coarsely: svcboot's libs, a package, Node itself, or V8's own entries. */
export function areaOf(url: string, functionName: string): string {
  if (url === '') return functionName.startsWith('(') ? functionName : 'native (Node/V8 bindings)';
  const p = url.replace(/^file:\/\//, '');
  const lib = /\/libs\/([^/]+)\//.exec(p);
  if (lib) return `svcboot ${lib[1]}`;
  const nm = /node_modules\/((?:@[^/]+\/)?[^/]+)\//.exec(p);
  if (nm) return nm[1]!;
  if (!p.startsWith('/')) return 'Node (JavaScript internals)';
  return 'the bench server itself';
}

async function readProfile(file: string): Promise<Profile> {
  return JSON.parse(await readFile(file, 'utf8')) as Profile;
}

/** Self time grouped by areaOf, in percent of the busy (non-idle) time. */
export async function areas(file: string): Promise<Array<{ area: string; selfPct: number }>> {
  const prof = await readProfile(file);
  const byId = new Map(prof.nodes.map((x) => [x.id, x]));
  const by = new Map<string, number>();
  let total = 0;
  for (let i = 0; i < prof.samples.length; i++) {
    const cf = byId.get(prof.samples[i]!)!.callFrame;
    if (cf.functionName === '(idle)') continue;
    const dt = 1;
    const a = areaOf(cf.url, cf.functionName);
    by.set(a, (by.get(a) ?? 0) + dt);
    total += dt;
  }
  return [...by.entries()]
    .sort((a, b) => b[1] - a[1])
    .map(([area, v]) => ({ area, selfPct: (100 * v) / total }));
}

export async function topFrames(file: string, n: number, busyOnly = true): Promise<Frame[]> {
  const prof = await readProfile(file);
  const byId = new Map(prof.nodes.map((x) => [x.id, x]));
  const self = new Map<string, number>();
  let total = 0;
  for (let i = 0; i < prof.samples.length; i++) {
    const node = byId.get(prof.samples[i]!)!;
    const cf = node.callFrame;
    if (busyOnly && cf.functionName === '(idle)') continue;
    const dt = 1;
    const key = `${cf.functionName || '(anonymous)'}\t${shortUrl(cf.url)}${cf.url ? `:${cf.lineNumber + 1}` : ''}`;
    self.set(key, (self.get(key) ?? 0) + dt);
    total += dt;
  }
  return [...self.entries()]
    .sort((a, b) => b[1] - a[1])
    .slice(0, n)
    .map(([k, v]) => {
      const [name, where] = k.split('\t');
      return { name: name!, where: where!, selfPct: (100 * v) / total };
    });
}

if (process.argv[1] && path.resolve(process.argv[1]).endsWith('profile-top.ts')) {
  for (const f of await topFrames(process.argv[2]!, Number(process.argv[3] ?? 30)))
    console.log(`${f.selfPct.toFixed(1).padStart(5)}%  ${f.name}  ${f.where}`);
  console.log('');
  for (const a of await areas(process.argv[2]!))
    console.log(`${a.selfPct.toFixed(1).padStart(5)}%  ${a.area}`);
}
