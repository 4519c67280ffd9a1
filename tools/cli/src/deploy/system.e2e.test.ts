import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { K8sObject } from './manifests.js';
import { deploySystem, type SystemDeployResult } from './system.js';
import { readDocs, validate } from './test-support/k8s-schema.js';

/*
 * `svc deploy --system` on demo-chain (apps/demo-chain/svc.system.yaml: front calls users over
 * gRPC and billing over HTTP), written to a temporary folder and read back from disk.
 */

const repo = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../../..');
const chain = path.join(repo, 'apps/demo-chain');
const tmp = mkdtempSync(path.join(tmpdir(), 'svc-system-deploy-'));
afterAll(() => rmSync(tmp, { recursive: true, force: true }));

type Pod = {
  topologySpreadConstraints: Array<{ topologyKey: string; whenUnsatisfiable: string }>;
  containers: Array<{
    args?: string[];
    ports: Array<{ name: string }>;
    env: Array<{ name: string; value?: string; valueFrom?: unknown }>;
  }>;
};
const pod = (d: K8sObject) => (d['spec'] as { template: { spec: Pod } }).template.spec;
const of = (objects: K8sObject[], kind: string, name: string) =>
  objects.find((o) => o.kind === kind && o.metadata.name === name);

let result: SystemDeployResult;
let plain: Record<string, K8sObject[]>;
const out = path.join(tmp, 'deploy');
beforeAll(async () => {
  result = await deploySystem({
    file: path.join(chain, 'svc.system.yaml'),
    out,
    dockerfileDir: () => path.join(tmp, 'image'),
  });
  plain = Object.fromEntries(
    ['front', 'users', 'billing'].map((s) => [s, readDocs(path.join(out, 'k8s', `${s}.yaml`))]),
  );
});

describe('svc deploy --system: demo-chain', () => {
  it('every object of every service validates against the Kubernetes schema', () => {
    const files = readdirSync(path.join(out, 'k8s'));
    expect(files.sort()).toEqual(['billing.yaml', 'front.yaml', 'namespace.yaml', 'users.yaml']);
    for (const f of files) for (const o of readDocs(path.join(out, 'k8s', f))) validate(o);
    expect(
      Object.values(plain)
        .flat()
        .filter((o) => o.kind === 'Deployment').length,
    ).toBe(3);
    for (const o of Object.values(plain).flat())
      expect(o.metadata).toMatchObject({ namespace: 'demo-chain' });
    // The NetworkPolicy schema refuses what Kubernetes refuses.
    const np = structuredClone(of(plain['users'] ?? [], 'NetworkPolicy', 'users')!);
    validate(np);
    (np['spec'] as Record<string, unknown>)['policyTypes'] = 'Ingress';
    expect(() => validate(np)).toThrow();
  });

  it("front's client entries call users and billing by their in-cluster names", () => {
    const front = pod(of(plain['front'] ?? [], 'Deployment', 'front')!).containers[0]!;
    expect(front.args).toEqual(['node', 'dist/main.js', 'front']);
    expect(front.env.find((e) => e.name === 'SVC_SET')?.value).toBe(
      [
        'grpcclient.users.target=dns:///users-headless.demo-chain.svc.cluster.local:8102',
        'grpcclient.users.loadBalancing=round_robin',
        'grpcclient.users.dnsMinIntervalMs=1000',
        'httpclient.billing.baseUrl=http://billing.demo-chain.svc.cluster.local:8103',
      ].join(','),
    );
    // The loader, given that SVC_SET, has the targets the pod will use: none on this host.
    const model = result.services.find((s) => s.service.name === 'front')!.model;
    expect(model.clients).toEqual([
      {
        kind: 'grpcclient',
        name: 'users',
        target: 'dns:///users-headless.demo-chain.svc.cluster.local:8102',
        loadBalancing: 'round_robin',
      },
      {
        kind: 'httpclient',
        name: 'billing',
        target: 'http://billing.demo-chain.svc.cluster.local:8103',
        loadBalancing: 'pick_first',
      },
    ]);
    expect(result.warnings).toEqual([]);
  });

  it('the gRPC callee gets a headless Service beside its ClusterIP one; the HTTP callee does not', () => {
    const headless = of(plain['users'] ?? [], 'Service', 'users-headless');
    expect(headless?.['spec']).toMatchObject({
      clusterIP: 'None',
      selector: { 'app.kubernetes.io/name': 'users' },
      ports: [{ name: 'users', port: 8102, targetPort: 'users', appProtocol: 'grpc' }],
    });
    expect(of(plain['users'] ?? [], 'Service', 'users')).toBeDefined();
    expect(
      plain['billing']?.filter((o) => o.kind === 'Service').map((o) => o.metadata.name),
    ).toEqual(['billing']);
  });

  it("the system file's values wire the variables; every replica set spreads over nodes", () => {
    expect(result.variables).toEqual([
      {
        service: 'billing',
        name: 'BILLING_HOST',
        from: 'the ConfigMap billing-env ("0.0.0.0", from svc.system.yaml)',
      },
    ]);
    expect(of(plain['billing'] ?? [], 'ConfigMap', 'billing-env')?.['data']).toEqual({
      BILLING_HOST: '0.0.0.0',
    });
    for (const s of ['front', 'users', 'billing'])
      expect(
        pod(of(plain[s] ?? [], 'Deployment', s)!).topologySpreadConstraints.map((t) => [
          t.topologyKey,
          t.whenUnsatisfiable,
        ]),
      ).toEqual([
        ['kubernetes.io/hostname', 'ScheduleAnyway'],
        ['topology.kubernetes.io/zone', 'ScheduleAnyway'],
      ]);
  });

  it('one Kustomize base for the system: the namespace and a folder per service', () => {
    const k = readDocs(path.join(out, 'kustomize/base/kustomization.yaml'))[0] as unknown as {
      resources: string[];
    };
    expect(k.resources).toEqual(['namespace.yaml', 'front', 'users', 'billing']);
  });
});

describe('svc deploy --system: a NetworkPolicy per service, from the client entries', () => {
  const policy = (s: string) => of(plain[s] ?? [], 'NetworkPolicy', s)?.['spec'];
  const scraper = {
    namespaceSelector: { matchLabels: { 'kubernetes.io/metadata.name': 'monitoring' } },
    podSelector: { matchLabels: { 'app.kubernetes.io/name': 'prometheus' } },
  };

  it('users and billing admit front (on the entry it calls) and the scraper; nothing else', () => {
    for (const s of ['users', 'billing'])
      expect(policy(s)).toEqual({
        podSelector: { matchLabels: { 'app.kubernetes.io/name': s } },
        policyTypes: ['Ingress'],
        ingress: [
          {
            from: [{ podSelector: { matchLabels: { 'app.kubernetes.io/name': 'front' } } }],
            ports: [{ port: s, protocol: 'TCP' }],
          },
          { from: [scraper], ports: [{ port: s, protocol: 'TCP' }] },
        ],
      });
  });

  it('front, public, admits the ingress controller and the scraper; no service calls it', () => {
    expect(policy('front')).toEqual({
      podSelector: { matchLabels: { 'app.kubernetes.io/name': 'front' } },
      policyTypes: ['Ingress'],
      ingress: [
        { from: [scraper], ports: [{ port: 'front', protocol: 'TCP' }] },
        {
          from: [
            {
              namespaceSelector: {
                matchLabels: { 'kubernetes.io/metadata.name': 'ingress-nginx' },
              },
              podSelector: { matchLabels: { 'app.kubernetes.io/name': 'ingress-nginx' } },
            },
          ],
          ports: [{ port: 'front', protocol: 'TCP' }],
        },
      ],
    });
  });

  it('the ports a policy names are container ports of the pod it selects', () => {
    for (const s of ['front', 'users', 'billing']) {
      const names = pod(of(plain[s] ?? [], 'Deployment', s)!).containers[0]!.ports.map(
        (p) => p.name,
      );
      const spec = policy(s) as { ingress: Array<{ ports: Array<{ port: string }> }> };
      for (const rule of spec.ingress) for (const p of rule.ports) expect(names).toContain(p.port);
    }
  });
});

describe('svc deploy --system: the picture', () => {
  it('graph.mmd and graph.svg beside the manifests: the calls of the system file, the public entry', () => {
    const mmd = readFileSync(path.join(out, 'graph.mmd'), 'utf8');
    expect(mmd.split('\n').filter((l) => l.includes('-->'))).toEqual([
      '  ingress -->|"public: front"| front',
      '  front -->|"gRPC (grpcclient[users])"| users',
      '  front -->|"HTTP (httpclient[billing])"| billing',
    ]);
    const svg = readFileSync(path.join(out, 'graph.svg'), 'utf8');
    for (const s of ['front', 'users', 'billing', 'ingress controller'])
      expect(svg).toContain(`font-weight="bold" fill="#222">${s}</text>`);
  });
});

describe("demo-chain's committed system (apps/demo-chain/deploy)", () => {
  const committed = path.join(chain, 'deploy');
  const files = (dir: string): string[] =>
    readdirSync(dir, { recursive: true, withFileTypes: true })
      .filter((d) => d.isFile())
      .map((d) => path.relative(dir, path.join(d.parentPath, d.name)))
      .sort();

  it('is what svc deploy writes today, byte for byte (else: cd apps/demo-chain && npx svc deploy)', () => {
    expect(files(committed)).toEqual(files(out));
    for (const f of files(out))
      expect(readFileSync(path.join(committed, f), 'utf8'), f).toBe(
        readFileSync(path.join(out, f), 'utf8'),
      );
  });

  it('every object in it validates, NetworkPolicy and the Kustomize base included', () => {
    const yamls = files(committed).filter(
      (f) => f.endsWith('.yaml') && !f.endsWith('kustomization.yaml'),
    );
    const kinds = new Set<string>();
    for (const f of yamls)
      for (const o of readDocs(path.join(committed, f))) {
        validate(o);
        kinds.add(o.kind);
      }
    expect([...kinds].sort()).toEqual([
      'ConfigMap',
      'Deployment',
      'HorizontalPodAutoscaler',
      'Namespace',
      'NetworkPolicy',
      'PodDisruptionBudget',
      'Service',
      'ServiceMonitor',
    ]);
  });
});

describe('svc deploy --system: what is not wired', () => {
  const system = (calls: string, extra = '') =>
    [
      'name: chain',
      'services:',
      `  front: { dir: ${chain}, config: front.yaml, calls: { ${calls} } }`,
      `  users: { dir: ${chain}, config: users.yaml }`,
      `  billing: { dir: ${chain}, config: billing.yaml${extra} }`,
    ].join('\n');

  it('a client entry left on localhost, and a server on loopback, are warnings naming them', async () => {
    const file = path.join(tmp, 'unwired.system.yaml');
    writeFileSync(file, system('users: users'));
    const r = await deploySystem({
      file,
      out: path.join(tmp, 'unwired'),
      dockerfileDir: () => tmp,
    });
    expect(r.warnings).toEqual([
      'front: httpclient[billing] calls http://127.0.0.1:8103, which in a pod is the pod itself: name the service it calls under services.front.calls in unwired.system.yaml, or point it elsewhere',
      'billing: ${BILLING_HOST} (httpserver[billing].host) falls back to 127.0.0.1, which in a pod is the pod itself: give BILLING_HOST a value in the ConfigMap billing-env',
      'billing: httpserver[billing] listens on 127.0.0.1 (its host): in a pod only the pod itself reaches that, not the Service, the probes or other pods; set host to 0.0.0.0 or leave it out',
    ]);
  });

  it('a call naming no client entry, or a gRPC call to an HTTP entry, fails with a code', async () => {
    const file = path.join(tmp, 'bad.system.yaml');
    writeFileSync(file, system('user: users'));
    await expect(deploySystem({ file, out: path.join(tmp, 'bad') })).rejects.toThrow(
      'front: calls.user names no client entry of front.yaml (its grpcclient and httpclient entries: users, billing) [SVC_CLI_DEPLOY_SYSTEM_WIRING]',
    );
    writeFileSync(file, system('users: billing/billing'));
    await expect(deploySystem({ file, out: path.join(tmp, 'bad') })).rejects.toThrow(
      /grpcclient\[users\] calls gRPC, and httpserver\[billing\] serves HTTP only.*SVC_CLI_DEPLOY_SYSTEM_WIRING/,
    );
  });
});
