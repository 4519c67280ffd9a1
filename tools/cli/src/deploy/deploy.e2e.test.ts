import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { main } from '../main.js';
import { deploy } from './command.js';
import { findVars } from './service-model.js';
import { buildManifests, millicores, type K8sObject } from './manifests.js';
import { readDocs, validate } from './test-support/k8s-schema.js';

/*
 * Every demo's `svc deploy` output against the Kubernetes API schema (test-support/k8s-schema.ts):
 * the plain YAML file, read back from disk.
 */

const repo = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../../..');
const demos = readdirSync(path.join(repo, 'apps')).filter((d) =>
  existsSync(path.join(repo, 'apps', d, 'boot.yaml')),
);
const tmp = mkdtempSync(path.join(tmpdir(), 'svc-deploy-'));
afterAll(() => rmSync(tmp, { recursive: true, force: true }));

type Container = {
  ports: Array<{ name: string; containerPort: number }>;
  env: Array<{
    name: string;
    value?: string;
    valueFrom?: { secretKeyRef?: { name: string; key: string } };
  }>;
  readinessProbe?: { httpGet: { path: string; port: string } };
  livenessProbe?: { httpGet: { path: string; port: string } };
  startupProbe?: { httpGet: { path: string } };
  securityContext: { readOnlyRootFilesystem: boolean; runAsNonRoot: boolean };
  volumeMounts: Array<{ name: string; mountPath: string; subPath?: string; readOnly?: boolean }>;
};
const podSpec = (d: K8sObject) =>
  (
    d['spec'] as {
      template: {
        spec: {
          terminationGracePeriodSeconds: number;
          containers: Container[];
          volumes: Array<{ name: string; secret?: { secretName: string } }>;
        };
      };
    }
  ).template.spec;

describe('svc deploy: every demo validates against the Kubernetes v1.33 schema', () => {
  for (const demo of demos) {
    it(demo, async () => {
      const out = path.join(tmp, demo);
      const result = await deploy({ dir: path.join(repo, 'apps', demo), out, dockerfileDir: out });
      const plain = readDocs(path.join(out, 'k8s', `${demo}.yaml`));
      expect(plain.map((o) => o.kind)).toEqual(
        expect.arrayContaining([
          'ConfigMap',
          'Deployment',
          'HorizontalPodAutoscaler',
          'PodDisruptionBudget',
        ]),
      );
      for (const o of plain) validate(o);
      const secretFile = path.join(out, 'k8s', 'secret.example.yaml');
      if (existsSync(secretFile)) for (const o of readDocs(secretFile)) validate(o);
      // The Kustomize base holds the same objects, one file each.
      const base = path.join(out, 'kustomize', 'base');
      const k = readDocs(path.join(base, 'kustomization.yaml'))[0] as unknown as {
        resources: string[];
      };
      const baseObjects = k.resources.flatMap((f) => readDocs(path.join(base, f)));
      expect(baseObjects).toEqual(plain);
      // The ConfigMap carries boot.yaml unchanged: ${VAR}s are read in the pod.
      const cm = plain.find((o) => o.kind === 'ConfigMap' && o.metadata.name.endsWith('-boot'));
      expect((cm?.['data'] as Record<string, string> | undefined)?.['boot.yaml']).toBe(
        readFileSync(path.join(repo, 'apps', demo, 'boot.yaml'), 'utf8'),
      );
      const recipe = readFileSync(path.join(out, 'Dockerfile'), 'utf8');
      expect(recipe).toMatch(/^CMD \["node", /m);
      // The build stage fills Node's compile cache; the image points NODE_COMPILE_CACHE at it.
      expect(recipe).toMatch(
        /^RUN NODE_ENV=production NODE_COMPILE_CACHE=\/app\/\.cache\/node node --import /m,
      );
      expect(recipe).toMatch(/^ENV NODE_COMPILE_CACHE=\/app\/\.cache\/node$/m);
      const serves = /^(grpc|httpserver):/m.test(
        readFileSync(path.join(repo, 'apps', demo, 'boot.yaml'), 'utf8'),
      );
      expect(result.model.servers.length > 0).toBe(serves);
      expect(plain.some((o) => o.kind === 'Service')).toBe(serves);
    });
  }
});

describe('svc deploy: what the manifests say', () => {
  it('the schema refuses what Kubernetes refuses (so the validation above can fail)', async () => {
    const out = path.join(tmp, 'broken');
    const { manifests } = await deploy({
      dir: path.join(repo, 'apps/demo-grpc'),
      out,
      dockerfileDir: out,
    });
    const d = structuredClone(manifests.objects.find((o) => o.kind === 'Deployment')!);
    const c = podSpec(d).containers[0] as unknown as Record<string, unknown>;
    c['ports'] = [{ name: 'greeter', containerPort: '8080' }];
    expect(() => validate(d)).toThrow();
    const hpa = structuredClone(
      manifests.objects.find((o) => o.kind === 'HorizontalPodAutoscaler')!,
    );
    delete (hpa['spec'] as Record<string, unknown>)['maxReplicas'];
    expect(() => validate(hpa)).toThrow();
  });

  it('demo-grpc: one named port 8080, probes on it, grace = drain + shutdown + margin', async () => {
    const out = path.join(tmp, 'grpc-facts');
    const { manifests } = await deploy({
      dir: path.join(repo, 'apps/demo-grpc'),
      out,
      dockerfileDir: out,
    });
    const d = manifests.objects.find((o) => o.kind === 'Deployment')!;
    const spec = podSpec(d);
    const c = spec.containers[0]!;
    // boot.yaml: port: ${PORT:-8080}
    expect(c.ports).toEqual([{ name: 'greeter', containerPort: 8080, protocol: 'TCP' }]);
    expect(c.readinessProbe?.httpGet).toMatchObject({ path: '/readyz', port: 'greeter' });
    expect(c.livenessProbe?.httpGet).toMatchObject({ path: '/livez', port: 'greeter' });
    expect(c.startupProbe?.httpGet.path).toBe('/livez');
    // entry-core: DEFAULT_SIGTERM_DRAIN_DELAY_MS 5000; entry-grpc: shutdownTimeoutMs default 10000.
    expect(spec.terminationGracePeriodSeconds).toBe(5 + 10 + 10);
    expect(c.securityContext).toMatchObject({ readOnlyRootFilesystem: true, runAsNonRoot: true });
    expect(c.env.map((e) => e.name)).toEqual(['SVC_BOOT_CONFIG']);
    const svc = manifests.objects.find((o) => o.kind === 'Service')!;
    expect((svc['spec'] as { ports: unknown[] }).ports).toEqual([
      { name: 'greeter', port: 8080, targetPort: 'greeter', protocol: 'TCP', appProtocol: 'grpc' },
    ]);
    const sm = manifests.objects.find((o) => o.kind === 'ServiceMonitor')!;
    expect((sm['spec'] as { endpoints: unknown[] }).endpoints).toEqual([
      { port: 'greeter', path: '/metrics', scheme: 'http', interval: '30s' },
    ]);
  });

  it('demo-secure: two ports; each secret ${VAR} from the Secret, PORT left to its default', async () => {
    const out = path.join(tmp, 'secure-facts');
    const { manifests } = await deploy({
      dir: path.join(repo, 'apps/demo-secure'),
      out,
      dockerfileDir: out,
    });
    const c = podSpec(manifests.objects.find((o) => o.kind === 'Deployment')!).containers[0]!;
    expect(c.ports.map((p) => [p.name, p.containerPort])).toEqual([
      ['greeter', 8090],
      ['ops', 8091],
    ]);
    const fromSecret = c.env.filter((e) => e.valueFrom?.secretKeyRef).map((e) => e.name);
    expect(fromSecret.sort()).toEqual([
      'DEMO_API_KEY',
      'DEMO_CSRF_KEY',
      'DEMO_JWT_SECRET',
      'DEMO_OPS_PASSWORD',
    ]);
    expect(c.env.some((e) => e.name === 'PORT' || e.name === 'HTTP_PORT')).toBe(false);
    // No secret value is written anywhere.
    const all = readFileSync(path.join(out, 'k8s', 'demo-secure.yaml'), 'utf8');
    const withoutBootYaml = all.replace(/boot\.yaml: \|[\s\S]*?\n---/, '');
    expect(withoutBootYaml).not.toContain('demo-jwt-secret-for-local-use-only');
    // Two entries stop one after the other: 5 s drain + 10 s + 10 s + 10 s margin.
    expect(
      podSpec(manifests.objects.find((o) => o.kind === 'Deployment')!)
        .terminationGracePeriodSeconds,
    ).toBe(35);
  });

  it('regenerating keeps the overlay the user edited', async () => {
    const out = path.join(tmp, 'regen');
    const dir = path.join(repo, 'apps/demo-minimal');
    await deploy({ dir, out, dockerfileDir: out });
    const overlay = path.join(out, 'kustomize/overlays/production/kustomization.yaml');
    writeFileSync(overlay, `${readFileSync(overlay, 'utf8')}# my edit\n`);
    const again = await deploy({ dir, out, dockerfileDir: out });
    expect(again.kept).toEqual([overlay]);
    expect(readFileSync(overlay, 'utf8')).toContain('# my edit');
  });

  it('finds secrets by key, by list under a secret key, in URL credentials and by name', () => {
    const vars = findVars(
      [
        'a:',
        '  token: "${T}"',
        '  basic: ["u:${P:-x}"]',
        '  url: "redis://u:${R}@h:6379"',
        '  host: "${DB_PASSWORD}"',
        '  port: ${PORT:-1}',
      ].join('\n'),
    );
    expect(vars.map((v) => [v.name, v.secret, v.fallback])).toEqual([
      ['T', true, undefined],
      ['P', true, 'x'],
      ['R', true, undefined],
      ['DB_PASSWORD', true, undefined],
      ['PORT', false, '1'],
    ]);
  });

  it('warns when app.workers and the CPU request disagree', () => {
    const model = {
      dir: '/x',
      bootFile: 'boot.yaml',
      bootText: '',
      app: { name: 'x', version: '1', description: '' },
      workers: 4 as const,
      drainDelayMs: undefined,
      servers: [],
      clients: [],
      stores: [],
      entries: [],
      vars: [],
      secretFiles: [],
      fileOutputs: [],
      pkg: {
        name: 'x',
        start: 'dist/main.js',
        nodeMajor: 22,
        hasBuild: true,
        svcbootKinds: [],
        localDepDirs: [],
      },
    };
    const opts = { image: 'x:1', minReplicas: 3, maxReplicas: 10 };
    expect(buildManifests(model, { ...opts, cpu: '1' }, 5000).warnings.join('\n')).toMatch(
      /app\.workers is 4 but the CPU request is 1/,
    );
    expect(buildManifests(model, opts, 5000).facts.cpuRequest).toBe('4');
    expect(buildManifests(model, opts, 5000).warnings.join('\n')).not.toMatch(/app\.workers/);
    expect(buildManifests({ ...model, workers: 'auto' }, opts, 5000).warnings.join('\n')).toMatch(
      /"auto"/,
    );
    expect(millicores('500m')).toBe(500);
  });

  it('refuses what it cannot use, with a code: bad replica bounds, no boot.yaml', async () => {
    const errs: string[] = [];
    const code = await main(
      [
        'deploy',
        '--dir',
        path.join(repo, 'apps/demo-grpc'),
        '--out',
        path.join(tmp, 'x'),
        '--min-replicas',
        '12',
      ],
      () => undefined,
      (l) => errs.push(l),
    );
    expect(code).toBe(1);
    expect(errs.join('\n')).toMatch(
      /--min-replicas \(12\) is more than --max-replicas \(10\).*SVC_CLI_DEPLOY_BAD_FLAG/,
    );
    errs.length = 0;
    expect(
      await main(
        ['deploy', '--dir', tmp],
        () => undefined,
        (l) => errs.push(l),
      ),
    ).toBe(1);
    expect(errs.join('\n')).toMatch(/no boot\.yaml in .*SVC_CLI_DEPLOY_NO_BOOT_YAML/);
  });
});

/** A service folder outside the repository whose packages resolve to the workspace's. */
function serviceDir(name: string, bootYaml: string, deps: string[]): string {
  const dir = path.join(tmp, name);
  mkdirSync(dir, { recursive: true });
  writeFileSync(path.join(dir, 'boot.yaml'), bootYaml);
  writeFileSync(
    path.join(dir, 'package.json'),
    JSON.stringify({
      name,
      version: '1.0.0',
      type: 'module',
      main: 'dist/main.js',
      scripts: { build: 'tsc' },
      dependencies: Object.fromEntries(deps.map((d) => [d, '*'])),
    }),
  );
  symlinkSync(path.join(repo, 'node_modules'), path.join(dir, 'node_modules'), 'dir');
  return dir;
}

describe('svc deploy: secrets without values', () => {
  // docs/guide.md §3: the bookstore's whole boot.yaml, as the reader writes it.
  const guide = readFileSync(path.join(repo, 'docs/guide.md'), 'utf8');
  const guideBootYaml = /```yaml file=boot\.yaml\n([\s\S]*?)```/.exec(guide)?.[1] ?? '';
  const guideDeps = [
    '@svcboot/entry-core',
    '@svcboot/entry-grpc',
    '@svcboot/entry-sql',
    '@svcboot/entry-cache',
    '@svcboot/middleware-jwt',
  ];

  it("the guide's JWT service deploys with JWT_SECRET unset", async () => {
    expect(guideBootYaml).toContain('token: ${JWT_SECRET}');
    expect(process.env['JWT_SECRET']).toBeUndefined();
    const dir = serviceDir('guide-bookstore', guideBootYaml, guideDeps);
    const lines: string[] = [];
    const errs: string[] = [];
    const code = await main(
      ['deploy', '--dir', dir],
      (l) => lines.push(l),
      (l) => errs.push(l),
    );
    expect(errs).toEqual([]);
    expect(code).toBe(0);
    // Their localhost defaults name the pod itself: a warning each, naming the entry.
    expect(lines.filter((l) => /localhost/.test(l))).toEqual([
      'warning: ${PG_ADDR} (relationaldb[db].addr) falls back to localhost:5432, which in a pod is the pod itself: give PG_ADDR a value in the ConfigMap bookstore-env',
      'warning: ${REDIS_ADDR} (cache[cache].kvstore.addrs[0]) falls back to localhost:6379, which in a pod is the pod itself: give REDIS_ADDR a value in the ConfigMap bookstore-env',
    ]);
    const objects = readDocs(path.join(dir, 'deploy/k8s/bookstore.yaml'));
    for (const o of objects) validate(o);
    const c = podSpec(objects.find((o) => o.kind === 'Deployment')!).containers[0]!;
    const jwt = c.env.find((e) => e.name === 'JWT_SECRET');
    expect(jwt?.valueFrom?.secretKeyRef).toMatchObject({
      name: 'bookstore-secrets',
      key: 'JWT_SECRET',
    });
    const secrets = readDocs(path.join(dir, 'deploy/k8s/secret.example.yaml'));
    for (const o of secrets) validate(o);
    expect(secrets.map((s) => s['stringData'])).toEqual([{ PG_PASS: '', JWT_SECRET: '' }]);
  });

  it('an empty default (${JWT_SECRET:-}) and an unset HS512 secret deploy too', async () => {
    const text = guideBootYaml
      .replace('token: ${JWT_SECRET}', 'token: ${JWT_SECRET:-}')
      .replace('algorithm: HS256', 'algorithm: HS512');
    expect(text).toContain('${JWT_SECRET:-}');
    const dir = serviceDir('guide-empty-default', text, guideDeps);
    const { manifests } = await deploy({ dir });
    const c = podSpec(manifests.objects.find((o) => o.kind === 'Deployment')!).containers[0]!;
    expect(c.env.find((e) => e.name === 'JWT_SECRET')?.valueFrom?.secretKeyRef?.key).toBe(
      'JWT_SECRET',
    );
  });

  it('a number without a value gets a placeholder the option accepts; a real problem still fails', async () => {
    const dir = serviceDir(
      'placeholder-port',
      'app:\n  name: p\ngrpc:\n  - name: p\n    port: ${P_PORT}\n',
      ['@svcboot/entry-core', '@svcboot/entry-grpc'],
    );
    const { manifests } = await deploy({ dir });
    expect(manifests.envConfigMap?.['data']).toEqual({ P_PORT: '' });
    const bad = serviceDir(
      'placeholder-bad',
      'app:\n  name: p\ngrpc:\n  - name: p\n    port: ${P_PORT}\n    nosuchkey: 1\n',
      ['@svcboot/entry-core', '@svcboot/entry-grpc'],
    );
    await expect(deploy({ dir: bad })).rejects.toThrow(/nosuchkey[\s\S]*SVC_CLI_DEPLOY_CONFIG/);
  });

  it('tokenPath: the file comes from the Secret <app>-files, the path variable is no secret', async () => {
    const text = guideBootYaml.replace('token: ${JWT_SECRET}', 'tokenPath: ${JWT_SECRET_FILE}');
    const dir = serviceDir('guide-token-path', text, guideDeps);
    const { manifests } = await deploy({ dir });
    const spec = podSpec(manifests.objects.find((o) => o.kind === 'Deployment')!);
    const c = spec.containers[0]!;
    expect(c.env.find((e) => e.name === 'JWT_SECRET_FILE')).toEqual({
      name: 'JWT_SECRET_FILE',
      value: '/var/run/secrets/svcboot/JWT_SECRET_FILE',
    });
    expect(c.volumeMounts).toContainEqual({
      name: 'secret-files',
      mountPath: '/var/run/secrets/svcboot',
      readOnly: true,
    });
    expect(spec.volumes.find((v) => v.name === 'secret-files')?.secret?.secretName).toBe(
      'bookstore-files',
    );
    expect(manifests.secretExamples.map((s) => [s.metadata.name, s['stringData']])).toEqual([
      ['bookstore-secrets', { PG_PASS: '' }],
      ['bookstore-files', { JWT_SECRET_FILE: '' }],
    ]);
    for (const o of [...manifests.objects, ...manifests.secretExamples]) validate(o);

    // A literal path: the file is mounted there.
    const literal = serviceDir(
      'guide-token-literal',
      guideBootYaml.replace('token: ${JWT_SECRET}', 'tokenPath: /etc/jwt/hs256.key'),
      guideDeps,
    );
    const lit = await deploy({ dir: literal });
    const lc = podSpec(lit.manifests.objects.find((o) => o.kind === 'Deployment')!).containers[0]!;
    expect(lc.volumeMounts).toContainEqual({
      name: 'secret-files',
      mountPath: '/etc/jwt/hs256.key',
      subPath: 'hs256.key',
      readOnly: true,
    });
  });
});

describe('svc deploy: file outputs on a read-only root filesystem', () => {
  it('a trace file and a log file under /app are warnings naming the option; /tmp and stdout are not', async () => {
    const dir = serviceDir(
      'file-outputs',
      [
        'app:',
        '  name: files',
        'logger:',
        '  - name: log',
        '    outputPaths: [stdout, logs/app.log, /tmp/app.log]',
        'grpc:',
        '  - name: files',
        '    port: 8080',
        '    middleware:',
        '      trace:',
        '        enabled: true',
        '        exporter: { file: { enabled: true, outputPath: "${SPANS_FILE:-/app/spans.json}" } }',
        '',
      ].join('\n'),
      ['@svcboot/entry-core', '@svcboot/entry-grpc', '@svcboot/middleware-trace'],
    );
    const { manifests } = await deploy({ dir });
    expect(manifests.warnings.filter((w) => /read-only/.test(w))).toEqual([
      "logger[log].outputPaths[1] writes to logs/app.log (/app/logs/app.log in the pod), but the pod's root filesystem is read-only (readOnlyRootFilesystem): write to stdout, or under /tmp (an emptyDir of 64Mi), or mount a volume there in your overlay",
      "grpc[files].middleware.trace.exporter.file.outputPath writes to /app/spans.json, but the pod's root filesystem is read-only (readOnlyRootFilesystem): write to stdout, or under /tmp (an emptyDir of 64Mi), or mount a volume there in your overlay",
    ]);
    expect(readFileSync(path.join(dir, '.dockerignore'), 'utf8').split('\n')).toContain('logs');
  });
});

describe('svc deploy: rk-boot gwPort (porting mode)', () => {
  it("rk-grpc's simple boot.yaml: the pod and its Service expose port and gwPort, /metrics scraped once", async () => {
    const fixture = readFileSync(
      path.join(repo, 'tools/porting/fixtures/rk-grpc--simple.yaml'),
      'utf8',
    );
    const dir = serviceDir('rk-simple', `app:\n  name: rk-simple\n  porting: rk-boot\n${fixture}`, [
      '@svcboot/entry-core',
      '@svcboot/entry-grpc',
    ]);
    const { manifests } = await deploy({ dir });
    const objects = readDocs(path.join(dir, 'deploy/k8s/rk-simple.yaml'));
    for (const o of objects) validate(o);
    const c = podSpec(objects.find((o) => o.kind === 'Deployment')!).containers[0]!;
    expect(c.ports).toEqual([
      { name: 'greeter', containerPort: 8080, protocol: 'TCP' },
      { name: 'greeter-gw', containerPort: 8081, protocol: 'TCP' },
    ]);
    const service = objects.find((o) => o.kind === 'Service') as unknown as {
      spec: { ports: Array<{ name: string; port: number }> };
    };
    expect(service.spec.ports.map((p) => [p.name, p.port])).toEqual([
      ['greeter', 8080],
      ['greeter-gw', 8081],
    ]);
    expect(manifests.portNames).toMatchObject({ greeter: 'greeter', 'greeter-gw': 'greeter-gw' });
    const monitor = objects.find((o) => o.kind === 'ServiceMonitor') as unknown as
      | { spec: { endpoints: Array<{ port: string }> } }
      | undefined;
    expect(monitor?.spec.endpoints.map((e) => e.port)).toEqual(['greeter']);
  });
});
