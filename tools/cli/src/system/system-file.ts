import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { isMap, isScalar, isSeq, LineCounter, parseDocument, type Node } from 'yaml';

/*
 * A system: several services described once, in `svc.system.yaml`, for every command that works
 * on more than one service (`svc deploy --system`, later `svc dev`). It names each service's
 * package folder and boot.yaml, and which of its client entries calls which other service: the
 * client entries' targets name ports on a laptop (`dns:///127.0.0.1:8102`), never services, so
 * this file is where "front calls users" is written down.
 *
 *   name: demo-chain            # the system (labels, the Kustomize base)
 *   namespace: demo-chain       # where it runs (in-cluster DNS names use it); default "default"
 *   services:
 *     front:                    # the service's name in the cluster (a DNS label)
 *       dir: .                  # its package (package.json), from this file; default "."
 *       config: front.yaml      # its boot.yaml, from dir; default boot.yaml
 *       args: [front]           # after `node <main>` in the container (one package, several services)
 *       public: [front]         # server entries reached from outside, through the ingress controller
 *       calls:                  # client entry (grpcclient or httpclient) → service[/server entry]
 *         users: users
 *         billing: billing
 *       env:                    # values of its ${VAR}s (the ConfigMap <service>-env)
 *         PG_ADDR: postgres.db.svc.cluster.local:5432
 *   fences:                     # who else may connect (NetworkPolicy); these are the defaults
 *     scraper: { namespace: monitoring, pods: { app.kubernetes.io/name: prometheus } }
 *     ingress: { namespace: ingress-nginx, pods: { app.kubernetes.io/name: ingress-nginx } }
 */

export const SYSTEM_FILE = 'svc.system.yaml';

/** One call of the system: a client entry of the caller to a server entry of the callee. */
export interface SystemCall {
  /** The client entry's name (a grpcclient or httpclient entry of the caller). */
  client: string;
  /** The callee: a service of the system. */
  service: string;
  /** The callee's server entry, when named (needed when it has several of the right kind). */
  entry: string | undefined;
}

export interface SystemService {
  name: string;
  /** The package folder, absolute. */
  dir: string;
  /** boot.yaml, relative to `dir`. */
  config: string;
  args: string[];
  public: string[];
  calls: SystemCall[];
  env: Record<string, string>;
}

/** Pods allowed in by every service's NetworkPolicy: a namespace and a pod label selector. */
export interface PeerSelector {
  namespace: string;
  pods: Record<string, string>;
}

export interface SystemDescription {
  /** The system file, absolute. */
  file: string;
  name: string;
  namespace: string;
  services: SystemService[];
  fences: { scraper: PeerSelector; ingress: PeerSelector };
}

export const DEFAULT_FENCES: SystemDescription['fences'] = {
  scraper: { namespace: 'monitoring', pods: { 'app.kubernetes.io/name': 'prometheus' } },
  ingress: { namespace: 'ingress-nginx', pods: { 'app.kubernetes.io/name': 'ingress-nginx' } },
};

export type SystemErrorCode = 'SVC_SYSTEM_NOT_FOUND' | 'SVC_SYSTEM_INVALID';

export class SystemError extends Error {
  override name = 'SystemError';
  constructor(
    readonly code: SystemErrorCode,
    message: string,
    /** Each problem: where (`services.front.calls.users`, line) and what. */
    readonly problems: readonly string[] = [],
  ) {
    super(`${message} [${code}]`);
  }
}

const LABEL = /^[a-z]([-a-z0-9]{0,61}[a-z0-9])?$/;
const ENV_NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;

/** Reads and checks a system file; every problem is reported at once, with its line. */
export function loadSystem(file: string): SystemDescription {
  const abs = path.resolve(file);
  if (!existsSync(abs))
    throw new SystemError(
      'SVC_SYSTEM_NOT_FOUND',
      `no system file ${abs}: write ${SYSTEM_FILE} (docs/kubernetes.md, "A system") or pass its path`,
    );
  return parseSystem(readFileSync(abs, 'utf8'), abs);
}

/** Parses the text of a system file (`file` names it in messages and anchors relative folders). */
export function parseSystem(text: string, file: string): SystemDescription {
  const lines = new LineCounter();
  const doc = parseDocument(text, { lineCounter: lines });
  const problems: string[] = [];
  const rel = path.basename(file);
  const at = (where: string, node: unknown, what: string): void => {
    const offset = (node as { range?: [number] } | undefined)?.range?.[0];
    const line = offset === undefined ? '' : ` (line ${lines.linePos(offset).line})`;
    problems.push(`${where}${line}: ${what}`);
  };
  for (const e of doc.errors) problems.push(`${rel}: ${e.message}`);
  const root = doc.contents as Node | null;
  const baseDir = path.dirname(file);
  const system: SystemDescription = {
    file,
    name: '',
    namespace: 'default',
    services: [],
    fences: structuredClone(DEFAULT_FENCES),
  };
  if (problems.length === 0 && !isMap(root))
    at('(root)', root, 'expected a map with name and services');

  /** The scalar text at key `key` of map `m`, checked to be a string. */
  const str = (m: unknown, key: string, where: string): string | undefined => {
    if (!isMap(m)) return undefined;
    const node = m.get(key, true) as Node | undefined;
    if (node === undefined) return undefined;
    if (!isScalar(node) || (typeof node.value !== 'string' && typeof node.value !== 'number')) {
      at(where === '' ? key : `${where}.${key}`, node, 'expected a text');
      return undefined;
    }
    return String(node.value);
  };
  const strList = (m: unknown, key: string, where: string): string[] => {
    if (!isMap(m)) return [];
    const node = m.get(key, true) as Node | undefined;
    if (node === undefined) return [];
    if (!isSeq(node)) {
      at(`${where}.${key}`, node, 'expected a list, e.g. [front]');
      return [];
    }
    return node.items.flatMap((item, i) => {
      if (isScalar(item) && (typeof item.value === 'string' || typeof item.value === 'number'))
        return [String(item.value)];
      at(`${where}.${key}[${i}]`, item, 'expected a text');
      return [];
    });
  };
  const strMap = (m: unknown, key: string, where: string): Array<[string, string, Node]> => {
    if (!isMap(m)) return [];
    const node = m.get(key, true) as Node | undefined;
    if (node === undefined) return [];
    if (!isMap(node)) {
      at(`${where}.${key}`, node, 'expected a map');
      return [];
    }
    return node.items.flatMap((pair) => {
      const k = isScalar(pair.key) ? String(pair.key.value) : '';
      const v = pair.value as Node | null;
      if (isScalar(v) && v.value !== null && typeof v.value !== 'object')
        return [[k, String(v.value), v] as [string, string, Node]];
      at(`${where}.${key}.${k}`, v ?? pair.key, 'expected a text');
      return [];
    });
  };
  const known = (m: unknown, keys: readonly string[], where: string): void => {
    if (!isMap(m)) return;
    for (const pair of m.items) {
      const k = isScalar(pair.key) ? String(pair.key.value) : '';
      if (!keys.includes(k))
        at(
          where === '' ? k : `${where}.${k}`,
          pair.key,
          `unknown key; expected one of ${keys.join(', ')}`,
        );
    }
  };

  if (isMap(root)) {
    known(root, ['name', 'namespace', 'services', 'fences'], '');
    const name = str(root, 'name', '') ?? '';
    if (name === '') at('name', root, 'the system needs a name (a DNS label, e.g. demo-chain)');
    else if (!LABEL.test(name))
      at('name', root.get('name', true), `"${name}" is not a DNS label (a-z, 0-9, '-'; ≤ 63)`);
    system.name = name;
    const ns = str(root, 'namespace', '') ?? 'default';
    if (!LABEL.test(ns)) at('namespace', root.get('namespace', true), `"${ns}" is not a DNS label`);
    system.namespace = ns;

    const services = root.get('services', true) as Node | undefined;
    if (!isMap(services) || services.items.length === 0)
      at(
        'services',
        services ?? root,
        'expected a map of services, e.g. front: { config: front.yaml }',
      );
    else {
      for (const pair of services.items) {
        const svcName = isScalar(pair.key) ? String(pair.key.value) : '';
        const where = `services.${svcName}`;
        const m = pair.value === null ? undefined : (pair.value as Node);
        if (!LABEL.test(svcName))
          at(
            where,
            pair.key,
            `"${svcName}" is not a DNS label (a-z, 0-9, '-'; it names the service in the cluster)`,
          );
        if (m !== undefined && !isMap(m)) {
          at(where, m, 'expected a map (dir, config, args, public, calls, env)');
          continue;
        }
        known(m, ['dir', 'config', 'args', 'public', 'calls', 'env'], where);
        const dir = path.resolve(baseDir, str(m, 'dir', where) ?? '.');
        const config = str(m, 'config', where) ?? 'boot.yaml';
        if (!existsSync(path.join(dir, 'package.json')))
          at(`${where}.dir`, m?.get('dir', true) ?? pair.key, `no package.json in ${dir}`);
        else if (!existsSync(path.resolve(dir, config)))
          at(`${where}.config`, m?.get('config', true) ?? pair.key, `no ${config} in ${dir}`);
        const env: Record<string, string> = {};
        for (const [k, v, node] of strMap(m, 'env', where)) {
          if (!ENV_NAME.test(k)) at(`${where}.env.${k}`, node, 'not a variable name');
          env[k] = v;
        }
        system.services.push({
          name: svcName,
          dir,
          config,
          args: strList(m, 'args', where),
          public: strList(m, 'public', where),
          calls: strMap(m, 'calls', where).map(([client, target]) => {
            const [service = '', entry] = target.split('/');
            return { client, service, entry };
          }),
          env,
        });
      }
      // Every call names a service of the system, never itself.
      const names = system.services.map((s) => s.name);
      for (const s of system.services) {
        const calls = (services.get(s.name, true) as Node | undefined) ?? services;
        const callsNode = isMap(calls) ? (calls.get('calls', true) as Node | undefined) : undefined;
        for (const c of s.calls) {
          const node = isMap(callsNode) ? callsNode.get(c.client, true) : callsNode;
          if (!names.includes(c.service))
            at(
              `services.${s.name}.calls.${c.client}`,
              node,
              `"${c.service}" is no service of the system (services: ${names.join(', ')})`,
            );
          else if (c.service === s.name)
            at(
              `services.${s.name}.calls.${c.client}`,
              node,
              'a service calling itself needs no wiring',
            );
        }
      }
    }

    const fences = root.get('fences', true) as Node | undefined;
    if (fences !== undefined) {
      if (!isMap(fences)) at('fences', fences, 'expected a map (scraper, ingress)');
      known(fences, ['scraper', 'ingress'], 'fences');
      for (const which of ['scraper', 'ingress'] as const) {
        const f = isMap(fences) ? (fences.get(which, true) as Node | undefined) : undefined;
        if (f === undefined) continue;
        known(f, ['namespace', 'pods'], `fences.${which}`);
        const where = `fences.${which}`;
        const namespace = str(f, 'namespace', where) ?? system.fences[which].namespace;
        const pods = Object.fromEntries(strMap(f, 'pods', where).map(([k, v]) => [k, v]));
        system.fences[which] = {
          namespace,
          pods: Object.keys(pods).length > 0 ? pods : system.fences[which].pods,
        };
      }
    }
  }
  if (problems.length > 0)
    throw new SystemError(
      'SVC_SYSTEM_INVALID',
      `${file}: ${problems.length} problem${problems.length === 1 ? '' : 's'}\n${problems.map((p) => `  - ${p}`).join('\n')}`,
      problems,
    );
  return system;
}
