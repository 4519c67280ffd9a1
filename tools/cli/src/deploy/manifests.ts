import { createHash } from 'node:crypto';
import path from 'node:path';
import type { ServerEntry, ServiceModel } from './service-model.js';

/*
 * The Kubernetes objects of one service, from its ServiceModel. Plain data (apiVersion, kind, …):
 * the caller writes them as plain YAML and as a Kustomize base. Choices (docs/kubernetes.md):
 * - probes on the first server entry's port: startup and liveness on /livez, readiness on /readyz
 *   (which turns 503 at SIGTERM and while a dependency with readinessCheck is down);
 * - terminationGracePeriodSeconds = drain delay + every server entry's shutdown timeout
 *   (entries stop one after the other) + a margin for connectors and log flushing;
 * - rolling update with maxUnavailable 0 / maxSurge 1: start a new pod, wait for it to be ready,
 *   then stop an old one; replicas left to the HPA (a `replicas:` would undo its scaling on
 *   every apply);
 * - boot.yaml in a ConfigMap mounted over /app/boot.yaml; each secret `${VAR}` from the Secret
 *   `<app>-secrets`; a `${VAR}` that is no secret and has no default from the ConfigMap
 *   `<app>-env`; references with a default are left unset, so the ports stay boot.yaml's;
 * - key-material files (`tokenPath`, `certFile`, …) from the Secret `<app>-files`: a `${VAR}`
 *   path is set to the file's mounted path under SECRET_FILES_DIR, a literal path gets the file
 *   mounted there.
 */

/** Where the files of the Secret `<app>-files` are mounted. */
export const SECRET_FILES_DIR = '/var/run/secrets/svcboot';

export type K8sObject = {
  apiVersion: string;
  kind: string;
  metadata: { name: string; namespace?: string; labels?: Record<string, string> };
} & Record<string, unknown>;

export interface DeployOptions {
  /** The image reference the Deployment runs. */
  image: string;
  /** CPU request (`500m`, `2`); default from app.workers. */
  cpu?: string | undefined;
  memory?: string | undefined;
  minReplicas: number;
  maxReplicas: number;
  namespace?: string | undefined;
  /** Values of `${VAR}`s, for the ConfigMap `<app>-env` (a system wires its services with them). */
  env?: Readonly<Record<string, string>> | undefined;
  /** The objects' name (default: from app.name); a system names each service. */
  name?: string | undefined;
  /** More labels on every object (a system's `app.kubernetes.io/part-of`). */
  labels?: Readonly<Record<string, string>> | undefined;
  /** After `node <main>` in the container (one package holding several services). */
  args?: readonly string[] | undefined;
  /** boot.yaml overrides set in the pod (`SVC_SET`): a system's wiring of its client entries. */
  overrides?: readonly string[] | undefined;
  /** Also a headless Service `<name>-headless` for the grpc ports (gRPC callees: client-side balancing). */
  headless?: boolean | undefined;
}

/** A host that, in a pod, is the pod itself. */
const LOCALHOST = /(^|[/@[])(localhost|127\.\d+\.\d+\.\d+|::1)(\]|[:/]|$)/i;

export interface Manifests {
  /** In apply order. */
  objects: K8sObject[];
  /**
   * The Secrets to create once (values empty): `<app>-secrets` when boot.yaml has secret
   * references, `<app>-files` when it names key-material files.
   */
  secretExamples: K8sObject[];
  /** The ConfigMap of non-secret variables without a default, when any. */
  envConfigMap: K8sObject | undefined;
  warnings: string[];
  /** The numbers the objects were made from (docs, tests). */
  facts: { graceSeconds: number; drainDelayMs: number; shutdownMs: number; cpuRequest: string };
  /** Each server entry's named container port (`greeter` → `greeter`, `8080` → `grpc-8080`). */
  portNames: Record<string, string>;
}

/** Margin on top of drain + shutdown timeouts: connectors closing, logs flushing, the exit. */
export const GRACE_MARGIN_SECONDS = 10;

/** A valid port name (IANA_SVC_NAME: ≤ 15 chars, lowercase alphanumerics and '-', a letter). */
export function portName(entry: ServerEntry, taken: Set<string>): string {
  let base = entry.name
    .toLowerCase()
    .replace(/[^a-z0-9-]+/g, '-')
    .replace(/-+/g, '-')
    .replace(/^-|-$/g, '');
  if (!/[a-z]/.test(base)) base = `${entry.kind === 'grpc' ? 'grpc' : 'http'}-${base}`;
  base = base.slice(0, 15).replace(/-$/, '');
  let name = base;
  for (let i = 2; taken.has(name); i++) name = `${base.slice(0, 15 - String(i).length - 1)}-${i}`;
  taken.add(name);
  return name;
}

/** A DNS-1123 label from the app name. */
export function resourceName(app: string): string {
  const n = app
    .toLowerCase()
    .replace(/^@[^/]+\//, '')
    .replace(/[^a-z0-9-]+/g, '-')
    .replace(/^-+|-+$/g, '')
    .slice(0, 52);
  return n || 'service';
}

/** CPU in millicores (`500m` → 500, `2` → 2000); NaN when unreadable. */
export function millicores(cpu: string): number {
  const m = /^(\d+(?:\.\d+)?)(m?)$/.exec(cpu.trim());
  if (!m) return Number.NaN;
  return m[2] ? Number(m[1]) : Number(m[1]) * 1000;
}

export function buildManifests(
  model: ServiceModel,
  opts: DeployOptions,
  defaultDrainMs: number,
): Manifests {
  const warnings: string[] = [];
  const name = opts.name ?? resourceName(model.app.name);
  const labels = {
    ...opts.labels,
    'app.kubernetes.io/name': name,
    'app.kubernetes.io/version': model.app.version || 'unknown',
    'app.kubernetes.io/managed-by': 'svc-deploy',
  };
  const selector = { 'app.kubernetes.io/name': name };
  const meta = (suffix = '') => ({
    name: `${name}${suffix}`,
    ...(opts.namespace ? { namespace: opts.namespace } : {}),
    labels,
  });

  // Ports and probes.
  const taken = new Set<string>();
  const ports = model.servers.map((s) => ({ s, port: portName(s, taken) }));
  const probeOn = ports[0];

  // Workers and CPU.
  const workers = model.workers;
  const defaultCpu = typeof workers === 'number' && workers > 1 ? String(workers) : '250m';
  const cpuRequest = opts.cpu ?? defaultCpu;
  const cpuM = millicores(cpuRequest);
  if (workers === 'auto') {
    warnings.push(
      `app.workers is "auto": in a container Node counts the node's CPUs, not the pod's CPU request (${cpuRequest}); set app.workers to a number matching the request, or 1 and scale with replicas`,
    );
  } else if (typeof workers === 'number' && workers > 1 && cpuM < workers * 1000) {
    warnings.push(
      `app.workers is ${workers} but the CPU request is ${cpuRequest} (${cpuM}m < ${workers * 1000}m): the workers will share less than one CPU each; request ${workers} CPUs (--cpu ${workers}) or lower app.workers`,
    );
  } else if ((workers === undefined || workers === 1) && cpuM > 1500) {
    warnings.push(
      `the CPU request is ${cpuRequest} but app.workers is ${workers ?? 1}: one Node process uses about one CPU; set app.workers to ${Math.floor(cpuM / 1000)} or request less and add replicas`,
    );
  }

  // Grace period.
  const drainDelayMs = model.drainDelayMs ?? defaultDrainMs;
  const shutdownMs = model.servers.reduce((sum, s) => sum + s.shutdownTimeoutMs, 0);
  const graceSeconds = Math.ceil((drainDelayMs + shutdownMs) / 1000) + GRACE_MARGIN_SECONDS;

  // Environment.
  const env: Array<Record<string, unknown>> = [];
  const secretVars = model.vars.filter((v) => v.secret);
  // Key-material files: each a key of the Secret `<name>-files`.
  const fileKeys = new Set<string>();
  const fileKey = (wanted: string): string => {
    const base = wanted.replace(/[^-._a-zA-Z0-9]+/g, '-').replace(/^[.-]+/, '') || 'file';
    let key = base;
    for (let i = 2; fileKeys.has(key); i++) key = `${base}-${i}`;
    fileKeys.add(key);
    return key;
  };
  const fileVars = model.vars.filter((v) => v.file).map((v) => ({ v, key: fileKey(v.name) }));
  const literalFiles = model.secretFiles.map((f) => ({
    f,
    key: fileKey(path.posix.basename(f.path)),
    mountPath: path.posix.resolve('/app', f.path),
  }));
  const hasFiles = fileVars.length + literalFiles.length > 0;
  for (const { v, key } of fileVars)
    env.push({ name: v.name, value: `${SECRET_FILES_DIR}/${key}` });
  for (const v of secretVars) {
    env.push({
      name: v.name,
      valueFrom: {
        secretKeyRef: { name: `${name}-secrets`, key: v.name, optional: v.fallback !== undefined },
      },
    });
    if (v.fallback !== undefined && v.fallback !== '')
      warnings.push(
        `\${${v.name}} (${v.at}) is a secret with a default in boot.yaml: set it in the Secret ${name}-secrets, or the default written in boot.yaml is used`,
      );
  }
  // A default naming this host (`${PG_ADDR:-localhost:5432}`) names the pod itself in a cluster:
  // a key of `<name>-env` (optional: empty means the default) unless the caller gives a value.
  const given = opts.env ?? {};
  const local = model.vars.filter(
    (v) =>
      !v.secret &&
      !v.file &&
      v.fallback !== undefined &&
      LOCALHOST.test(v.fallback) &&
      given[v.name] === undefined,
  );
  for (const v of local)
    warnings.push(
      `\${${v.name}} (${v.at}) falls back to ${v.fallback}, which in a pod is the pod itself: give ${v.name} a value in the ConfigMap ${name}-env`,
    );
  const fromConfigMap = model.vars.filter(
    (v) =>
      !v.secret &&
      !v.file &&
      (v.fallback === undefined || local.includes(v) || given[v.name] !== undefined),
  );
  for (const v of fromConfigMap) {
    env.push({
      name: v.name,
      valueFrom: {
        configMapKeyRef: {
          name: `${name}-env`,
          key: v.name,
          ...(v.fallback !== undefined ? { optional: true } : {}),
        },
      },
    });
  }
  // The root filesystem is read-only; /tmp (an emptyDir) is the one place the pod may write.
  for (const o of model.fileOutputs) {
    const abs = path.posix.resolve('/app', o.path);
    if (abs === '/tmp' || abs.startsWith('/tmp/')) continue;
    warnings.push(
      `${o.at} writes to ${o.path}${abs === o.path ? '' : ` (${abs} in the pod)`}, but the pod's root filesystem is read-only (readOnlyRootFilesystem): write to stdout, or under /tmp (an emptyDir of 64Mi), or mount a volume there in your overlay`,
    );
  }
  for (const s of model.servers)
    if (s.host !== undefined && LOCALHOST.test(s.host))
      warnings.push(
        `${s.kind}[${s.name}] listens on ${s.host} (its host): in a pod only the pod itself reaches that, not the Service, the probes or other pods; set host to 0.0.0.0 or leave it out`,
      );
  if (model.servers.length === 0)
    warnings.push(
      'boot.yaml has no grpc or httpserver entry: no ports, probes, Service or ServiceMonitor',
    );

  const bootHash = createHash('sha256').update(model.bootText).digest('hex').slice(0, 16);
  const httpGet = (path: string) =>
    probeOn
      ? { httpGet: { path, port: probeOn.port, scheme: probeOn.s.tls ? 'HTTPS' : 'HTTP' } }
      : undefined;
  const container: Record<string, unknown> = {
    name: 'app',
    image: opts.image,
    imagePullPolicy: 'IfNotPresent',
    ...(opts.args && opts.args.length > 0 ? { args: ['node', model.pkg.start, ...opts.args] } : {}),
    env: [
      { name: 'SVC_BOOT_CONFIG', value: '/app/boot.yaml' },
      ...(opts.overrides && opts.overrides.length > 0
        ? [
            {
              name: 'SVC_SET',
              value: opts.overrides.map((o) => o.replaceAll(',', '\\,')).join(','),
            },
          ]
        : []),
      ...env,
    ],
    ports: ports.map(({ s, port }) => ({ name: port, containerPort: s.port, protocol: 'TCP' })),
    resources: {
      requests: { cpu: cpuRequest, memory: opts.memory ?? '256Mi' },
      limits: { memory: opts.memory ?? '256Mi' },
    },
    securityContext: {
      allowPrivilegeEscalation: false,
      readOnlyRootFilesystem: true,
      runAsNonRoot: true,
      capabilities: { drop: ['ALL'] },
    },
    volumeMounts: [
      { name: 'boot-yaml', mountPath: '/app/boot.yaml', subPath: 'boot.yaml', readOnly: true },
      { name: 'tmp', mountPath: '/tmp' },
      ...(fileVars.length > 0
        ? [{ name: 'secret-files', mountPath: SECRET_FILES_DIR, readOnly: true }]
        : []),
      ...literalFiles.map(({ key, mountPath }) => ({
        name: 'secret-files',
        mountPath,
        subPath: key,
        readOnly: true,
      })),
    ],
  };
  if (probeOn) {
    // Bootstrap may take up to 60 s per entry by default: the startup probe allows that.
    container['startupProbe'] = {
      ...httpGet('/livez'),
      periodSeconds: 2,
      failureThreshold: 45,
      timeoutSeconds: 2,
    };
    container['livenessProbe'] = {
      ...httpGet('/livez'),
      periodSeconds: 10,
      failureThreshold: 3,
      timeoutSeconds: 2,
    };
    container['readinessProbe'] = {
      ...httpGet('/readyz'),
      periodSeconds: 5,
      failureThreshold: 1,
      successThreshold: 1,
      timeoutSeconds: 2,
    };
  }

  const deployment: K8sObject = {
    apiVersion: 'apps/v1',
    kind: 'Deployment',
    metadata: meta(),
    spec: {
      selector: { matchLabels: selector },
      strategy: { type: 'RollingUpdate', rollingUpdate: { maxUnavailable: 0, maxSurge: 1 } },
      template: {
        metadata: { labels, annotations: { 'svcboot.dev/boot-yaml-sha256': bootHash } },
        spec: {
          terminationGracePeriodSeconds: graceSeconds,
          // Service links would add <SVC>_PORT=tcp://… variables that a ${PORT}-style reference could read.
          enableServiceLinks: false,
          // Replicas on different nodes (and zones) where the cluster has them; never unschedulable.
          topologySpreadConstraints: ['kubernetes.io/hostname', 'topology.kubernetes.io/zone'].map(
            (topologyKey) => ({
              maxSkew: 1,
              topologyKey,
              whenUnsatisfiable: 'ScheduleAnyway',
              labelSelector: { matchLabels: selector },
            }),
          ),
          automountServiceAccountToken: false,
          securityContext: {
            runAsNonRoot: true,
            runAsUser: 1000,
            runAsGroup: 1000,
            fsGroup: 1000,
            seccompProfile: { type: 'RuntimeDefault' },
          },
          containers: [container],
          volumes: [
            { name: 'boot-yaml', configMap: { name: `${name}-boot` } },
            { name: 'tmp', emptyDir: { sizeLimit: '64Mi' } },
            ...(hasFiles
              ? [
                  {
                    name: 'secret-files',
                    // Readable by the service's group (fsGroup 1000), by no one else.
                    secret: { secretName: `${name}-files`, defaultMode: 0o440 },
                  },
                ]
              : []),
          ],
        },
      },
    },
  };

  const configMap: K8sObject = {
    apiVersion: 'v1',
    kind: 'ConfigMap',
    metadata: meta('-boot'),
    data: { 'boot.yaml': model.bootText },
  };

  const objects: K8sObject[] = [configMap, deployment];
  if (ports.length > 0) {
    objects.push({
      apiVersion: 'v1',
      kind: 'Service',
      metadata: meta(),
      spec: {
        type: 'ClusterIP',
        selector,
        ports: ports.map(({ s, port }) => ({
          name: port,
          port: s.port,
          targetPort: port,
          protocol: 'TCP',
          appProtocol: s.kind === 'grpc' ? 'grpc' : s.tls ? 'https' : 'http',
        })),
      },
    });
  }
  const grpcPorts = ports.filter(({ s }) => s.kind === 'grpc');
  if (opts.headless && grpcPorts.length > 0) {
    // DNS answers with every ready pod's address: a gRPC client with round_robin connects to each
    // (a ClusterIP keeps an HTTP/2 connection, so every call of a client, on one pod).
    objects.push({
      apiVersion: 'v1',
      kind: 'Service',
      metadata: meta('-headless'),
      spec: {
        clusterIP: 'None',
        selector,
        ports: grpcPorts.map(({ s, port }) => ({
          name: port,
          port: s.port,
          targetPort: port,
          protocol: 'TCP',
          appProtocol: 'grpc',
        })),
      },
    });
  }
  objects.push({
    apiVersion: 'autoscaling/v2',
    kind: 'HorizontalPodAutoscaler',
    metadata: meta(),
    spec: {
      scaleTargetRef: { apiVersion: 'apps/v1', kind: 'Deployment', name },
      minReplicas: opts.minReplicas,
      maxReplicas: opts.maxReplicas,
      metrics: [
        {
          type: 'Resource',
          resource: { name: 'cpu', target: { type: 'Utilization', averageUtilization: 70 } },
        },
      ],
    },
  });
  objects.push({
    apiVersion: 'policy/v1',
    kind: 'PodDisruptionBudget',
    metadata: meta(),
    spec: { maxUnavailable: 1, selector: { matchLabels: selector } },
  });
  const scraped = ports.filter(({ s }) => s.metricsPath !== undefined);
  if (scraped.length > 0) {
    objects.push({
      apiVersion: 'monitoring.coreos.com/v1',
      kind: 'ServiceMonitor',
      metadata: meta(),
      spec: {
        selector: { matchLabels: selector },
        endpoints: scraped.map(({ s, port }) => ({
          port,
          path: s.metricsPath,
          scheme: s.tls ? 'https' : 'http',
          interval: '30s',
        })),
      },
    });
  } else if (ports.length > 0) {
    warnings.push(
      'no server entry has prom.enabled: no ServiceMonitor (turn prom on to be scraped)',
    );
  }

  const secretExamples: K8sObject[] = [];
  if (secretVars.length > 0)
    secretExamples.push({
      apiVersion: 'v1',
      kind: 'Secret',
      metadata: meta('-secrets'),
      type: 'Opaque',
      stringData: Object.fromEntries(secretVars.map((v) => [v.name, ''])),
    });
  if (hasFiles)
    secretExamples.push({
      apiVersion: 'v1',
      kind: 'Secret',
      metadata: meta('-files'),
      type: 'Opaque',
      stringData: Object.fromEntries([...fileVars, ...literalFiles].map(({ key }) => [key, ''])),
    });
  const envConfigMap: K8sObject | undefined =
    fromConfigMap.length > 0
      ? {
          apiVersion: 'v1',
          kind: 'ConfigMap',
          metadata: meta('-env'),
          data: Object.fromEntries(fromConfigMap.map((v) => [v.name, given[v.name] ?? ''])),
        }
      : undefined;
  if (envConfigMap) objects.splice(1, 0, envConfigMap);
  return {
    objects,
    secretExamples,
    envConfigMap,
    warnings,
    facts: { graceSeconds, drainDelayMs, shutdownMs, cpuRequest },
    portNames: Object.fromEntries(ports.map(({ s, port }) => [s.name, port])),
  };
}
