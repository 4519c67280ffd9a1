import { existsSync } from 'node:fs';
import { mkdir, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { stringify } from 'yaml';
import { loadSystem, type SystemDescription, type SystemService } from '../system/system-file.js';
import { defaultDrainDelayMs, HEADER, writeBase, yamlDocs } from './command.js';
import { DOCKERIGNORE, dockerfile } from './dockerfile.js';
import { deployError } from './errors.js';
import { type ServiceGraph, toMermaid, toSvg } from './graph.js';
import { buildManifests, type K8sObject, type Manifests } from './manifests.js';
import {
  loadServiceModel,
  type ClientEntry,
  type ServerEntry,
  type ServiceModel,
} from './service-model.js';

/*
 * `svc deploy --system`: every service of a system file, wired to each other. Each call the
 * system file names (a client entry of the caller → a server entry of the callee) becomes a
 * boot.yaml override in the caller's pod (`SVC_SET`): a grpcclient's target
 * `dns:///<callee>-headless.<ns>.svc.cluster.local:<port>` with round_robin (the callee gets a
 * headless Service: DNS answers with each ready pod, and the client balances over connections to
 * all of them) and a 1 s dnsMinIntervalMs (a drained pod's GOAWAY is looked up again at once), an httpclient's baseUrl `http://<callee>.<ns>.svc.cluster.local:<port>` (a
 * ClusterIP: kube-proxy spreads connections). Each caller is loaded again with its overrides, so
 * the model, and the manifests written from it, hold the targets the pod will use.
 */

export interface SystemDeployInput {
  /** The system file. */
  file: string;
  /** Default: `deploy` beside the system file. */
  out?: string | undefined;
  namespace?: string | undefined;
  cpu?: string | undefined;
  memory?: string | undefined;
  minReplicas?: number | undefined;
  maxReplicas?: number | undefined;
  baseImage?: string | undefined;
  /** Where each package's Dockerfile goes (default: the package's folder). */
  dockerfileDir?: ((packageDir: string) => string) | undefined;
}

/** A call of the system, resolved: who calls whom, over which entry, at which address. */
export interface Wire {
  caller: string;
  client: ClientEntry;
  callee: string;
  server: ServerEntry;
  /** The target or baseUrl the caller's pod uses. */
  target: string;
  /** The `SVC_SET` assignments that make it so. */
  overrides: string[];
}

export interface SystemServiceResult {
  service: SystemService;
  model: ServiceModel;
  manifests: Manifests;
}

export interface SystemDeployResult {
  system: SystemDescription;
  namespace: string;
  services: SystemServiceResult[];
  wires: Wire[];
  /** Every `${VAR}` without a value of its own in boot.yaml, and where it comes from. */
  variables: Array<{ service: string; name: string; from: string }>;
  warnings: string[];
  /** The picture: graph.mmd and graph.svg. */
  graph: ServiceGraph;
  written: string[];
  kept: string[];
}

const hostOf = (svc: string, ns: string, headless: boolean) =>
  `${svc}${headless ? '-headless' : ''}.${ns}.svc.cluster.local`;

/** The callee's server entry a client entry reaches. */
function serverFor(
  caller: SystemService,
  client: ClientEntry,
  callee: ServiceModel,
  calleeName: string,
  entry: string | undefined,
): ServerEntry {
  const where = `${caller.name}: calls.${client.name} → ${calleeName}`;
  if (entry !== undefined) {
    const s = callee.servers.find((x) => x.name === entry);
    if (!s)
      throw deployError(
        'SVC_CLI_DEPLOY_SYSTEM_WIRING',
        `${where}/${entry}: ${calleeName} has no server entry "${entry}" (it has ${callee.servers.map((x) => x.name).join(', ') || 'none'})`,
      );
    if (client.kind === 'grpcclient' && s.kind !== 'grpc')
      throw deployError(
        'SVC_CLI_DEPLOY_SYSTEM_WIRING',
        `${where}/${entry}: grpcclient[${client.name}] calls gRPC, and httpserver[${entry}] serves HTTP only; name a grpc entry`,
      );
    return s;
  }
  // gRPC needs a grpc entry; HTTP prefers an httpserver entry, else a grpc entry's gateway.
  const wanted = client.kind === 'grpcclient' ? ['grpc'] : ['httpserver', 'grpc'];
  for (const kind of wanted) {
    const candidates = callee.servers.filter((x) => x.kind === kind);
    if (candidates.length === 1 && candidates[0]) return candidates[0];
    if (candidates.length > 1)
      throw deployError(
        'SVC_CLI_DEPLOY_SYSTEM_WIRING',
        `${where}: ${calleeName} has ${candidates.length} ${kind} entries (${candidates.map((x) => x.name).join(', ')}); write "${calleeName}/<entry>"`,
      );
  }
  throw deployError(
    'SVC_CLI_DEPLOY_SYSTEM_WIRING',
    `${where}: ${calleeName} has no ${wanted.join(' or ')} entry for ${client.kind}[${client.name}] to call`,
  );
}

/**
 * A gRPC caller's `dnsMinIntervalMs` on a headless Service: a drained pod's GOAWAY makes the
 * channel resolve the name again, and grpc-js defers that lookup until this long after the
 * previous one (30 s by default). A rolling update that replaces every pod the caller knows within
 * that time (the pods start fast, or there are few) leaves it with no ready address until the
 * lookup: every call fails meanwhile (apps/demo-chain/src/rolling-update.e2e.test.ts: 1,248
 * unary calls of ~1,500 with the default). The new pods are in DNS before an old one is
 * signalled (maxUnavailable 0), so a lookup at the GOAWAY finds them; at most one a second.
 */
const ROLLING_DNS_MIN_INTERVAL_MS = 1000;

/** The address of `server` of `callee` in the cluster, as the client entry writes it. */
function wire(
  client: ClientEntry,
  callee: string,
  server: ServerEntry,
  ns: string,
): Pick<Wire, 'target' | 'overrides'> {
  const key = `${client.kind}.${client.name}`;
  if (client.kind === 'grpcclient') {
    const target = `dns:///${hostOf(callee, ns, true)}:${server.port}`;
    return {
      target,
      overrides: [
        `${key}.target=${target}`,
        `${key}.loadBalancing=round_robin`,
        `${key}.dnsMinIntervalMs=${ROLLING_DNS_MIN_INTERVAL_MS}`,
      ],
    };
  }
  // Keep the path of the baseUrl (http://127.0.0.1:8103/api → http://billing…:8103/api).
  let pathPart = '';
  try {
    const u = new URL(client.target);
    pathPart = u.pathname === '/' ? '' : u.pathname;
  } catch {
    // A baseUrl the loader accepted is a URL; keep none if not.
  }
  const target = `${server.tls ? 'https' : 'http'}://${hostOf(callee, ns, false)}:${server.port}${pathPart}`;
  return { target, overrides: [`${key}.baseUrl=${target}`] };
}

const LOCAL_TARGET = /(^|[/@[])(localhost|127\.\d+\.\d+\.\d+|::1)(\]|[:/]|$)/i;

export async function deploySystem(input: SystemDeployInput): Promise<SystemDeployResult> {
  const system = loadSystem(input.file);
  const ns = input.namespace ?? system.namespace;
  const warnings: string[] = [];

  // 1. Each service as boot.yaml has it (with the system file's values of its variables).
  const first = new Map<string, ServiceModel>();
  for (const s of system.services)
    first.set(s.name, await loadServiceModel(s.dir, s.config, s.env));

  // 2. The wiring.
  const wires: Wire[] = [];
  const overrides = new Map<string, string[]>();
  const grpcCallees = new Set<string>();
  for (const s of system.services) {
    const model = first.get(s.name) as ServiceModel;
    for (const call of s.calls) {
      const same = model.clients.filter((c) => c.name === call.client);
      const client = same[0];
      if (!client)
        throw deployError(
          'SVC_CLI_DEPLOY_SYSTEM_WIRING',
          `${s.name}: calls.${call.client} names no client entry of ${s.config} (its grpcclient and httpclient entries: ${model.clients.map((c) => c.name).join(', ') || 'none'})`,
        );
      if (same.length > 1)
        throw deployError(
          'SVC_CLI_DEPLOY_SYSTEM_WIRING',
          `${s.name}: calls.${call.client} is both a grpcclient and an httpclient entry of ${s.config}; rename one`,
        );
      const callee = first.get(call.service) as ServiceModel;
      const server = serverFor(s, client, callee, call.service, call.entry);
      const w = wire(client, call.service, server, ns);
      wires.push({ caller: s.name, client, callee: call.service, server, ...w });
      overrides.set(s.name, [...(overrides.get(s.name) ?? []), ...w.overrides]);
      if (client.kind === 'grpcclient') grpcCallees.add(call.service);
    }
  }

  // 3. Each caller loaded again with its wiring: the targets its pod will use.
  const models = new Map<string, ServiceModel>();
  for (const s of system.services) {
    const set = overrides.get(s.name);
    const model = set
      ? await loadServiceModel(s.dir, s.config, { ...s.env, SVC_SET: set.join(',') })
      : (first.get(s.name) as ServiceModel);
    models.set(s.name, model);
    const wired = new Set(s.calls.map((c) => c.client));
    for (const c of model.clients)
      if (!wired.has(c.name) && LOCAL_TARGET.test(c.target))
        warnings.push(
          `${s.name}: ${c.kind}[${c.name}] calls ${c.target}, which in a pod is the pod itself: name the service it calls under services.${s.name}.calls in ${path.basename(system.file)}, or point it elsewhere`,
        );
  }

  // 4. The manifests.
  const services: SystemServiceResult[] = [];
  const variables: SystemDeployResult['variables'] = [];
  for (const s of system.services) {
    const model = models.get(s.name) as ServiceModel;
    const manifests = buildManifests(
      model,
      {
        image: `${model.pkg.name.replace(/^@[^/]+\//, '')}:${model.app.version || 'latest'}`,
        cpu: input.cpu,
        memory: input.memory,
        minReplicas: input.minReplicas ?? 3,
        maxReplicas: input.maxReplicas ?? 10,
        namespace: ns,
        env: s.env,
        name: s.name,
        labels: { 'app.kubernetes.io/part-of': system.name },
        args: s.args,
        overrides: overrides.get(s.name),
        headless: grpcCallees.has(s.name),
      },
      await defaultDrainDelayMs(s.dir),
    );
    manifests.objects.push(networkPolicy(system, s, model, manifests, wires, ns));
    for (const w of manifests.warnings) warnings.push(`${s.name}: ${w}`);
    for (const v of model.vars) {
      const from = v.file
        ? `a file of the Secret ${s.name}-files`
        : v.secret
          ? `the Secret ${s.name}-secrets`
          : s.env[v.name] !== undefined
            ? `the ConfigMap ${s.name}-env (${JSON.stringify(s.env[v.name])}, from ${path.basename(system.file)})`
            : manifests.envConfigMap &&
                Object.hasOwn(manifests.envConfigMap['data'] as object, v.name)
              ? `the ConfigMap ${s.name}-env (empty: fill it in the overlay)`
              : undefined;
      if (from !== undefined) variables.push({ service: s.name, name: v.name, from });
    }
    services.push({ service: s, model, manifests });
  }

  // 5. The files.
  const out = path.resolve(path.dirname(system.file), input.out ?? 'deploy');
  const written: string[] = [];
  const kept: string[] = [];
  const write = async (file: string, text: string): Promise<void> => {
    await mkdir(path.dirname(file), { recursive: true });
    await writeFile(file, text);
    written.push(file);
  };
  const packages = new Map<string, ServiceModel>();
  for (const { model } of services) if (!packages.has(model.dir)) packages.set(model.dir, model);
  for (const [dir, model] of packages) {
    const dockerDir = input.dockerfileDir ? input.dockerfileDir(dir) : dir;
    await write(
      path.join(dockerDir, 'Dockerfile'),
      dockerfile(model, input.baseImage ?? 'node:22-bookworm-slim'),
    );
    await write(path.join(dockerDir, '.dockerignore'), DOCKERIGNORE);
  }
  const namespace: K8sObject[] =
    ns === 'default'
      ? []
      : [
          {
            apiVersion: 'v1',
            kind: 'Namespace',
            metadata: { name: ns, labels: { 'app.kubernetes.io/part-of': system.name } },
          },
        ];
  if (namespace.length > 0)
    await write(path.join(out, 'k8s', 'namespace.yaml'), HEADER + yamlDocs(namespace));
  for (const { service, manifests } of services)
    await write(
      path.join(out, 'k8s', `${service.name}.yaml`),
      HEADER + yamlDocs(manifests.objects),
    );
  const secrets = services.flatMap(({ manifests }) => manifests.secretExamples);
  if (secrets.length > 0)
    await write(
      path.join(out, 'k8s', 'secret.example.yaml'),
      `# Create once with your values (kubectl apply -f, kubectl create secret generic NAME --from-literal=KEY=value or --from-file=KEY=./file).\n# An empty or missing value means boot.yaml's default, when it has one. Never commit real values.\n` +
        yamlDocs(secrets),
    );
  const base = path.join(out, 'kustomize', 'base');
  for (const { service, manifests } of services)
    await writeBase(path.join(base, service.name), service.name, manifests.objects, write);
  if (namespace.length > 0)
    await write(path.join(base, 'namespace.yaml'), HEADER + yamlDocs(namespace));
  await write(
    path.join(base, 'kustomization.yaml'),
    HEADER +
      stringify({
        apiVersion: 'kustomize.config.k8s.io/v1beta1',
        kind: 'Kustomization',
        resources: [
          ...(namespace.length > 0 ? ['namespace.yaml'] : []),
          ...services.map(({ service }) => service.name),
        ],
      }),
  );
  const overlay = path.join(out, 'kustomize', 'overlays', 'production', 'kustomization.yaml');
  if (existsSync(overlay)) kept.push(overlay);
  else {
    const images = [
      ...new Set(services.map(({ model }) => model.pkg.name.replace(/^@[^/]+\//, ''))),
    ];
    const version = services[0]?.model.app.version || 'latest';
    await write(
      overlay,
      `# Your edits live here: svc deploy writes this file once and never again.
# From the kustomize folder: kubectl kustomize overlays/production  ·  apply: kubectl apply -k overlays/production
apiVersion: kustomize.config.k8s.io/v1beta1
kind: Kustomization
resources:
  - ../../base
images:
${images.map((i) => `  - name: ${i}\n    newTag: ${JSON.stringify(version)}`).join('\n')}
# patches:
#   - target: { kind: HorizontalPodAutoscaler, name: ${services[0]?.service.name ?? 'front'} }
#     patch: |
#       - { op: replace, path: /spec/minReplicas, value: 5 }
`,
    );
  }
  const graph = systemGraph(system, services, wires);
  await write(path.join(out, 'graph.mmd'), toMermaid(graph));
  await write(path.join(out, 'graph.svg'), toSvg(graph));
  return { system, namespace: ns, services, wires, variables, warnings, graph, written, kept };
}

/** Who calls whom over which protocol, which stores each service holds, what is public. */
export function systemGraph(
  system: SystemDescription,
  services: readonly SystemServiceResult[],
  wires: readonly Wire[],
): ServiceGraph {
  const g: ServiceGraph = {
    title: `${system.name} (namespace ${system.namespace})`,
    nodes: [],
    edges: [],
  };
  if (services.some(({ service }) => service.public.length > 0))
    g.nodes.push({ id: 'ingress', lines: ['ingress controller'], shape: 'outside' });
  for (const { service, model } of services) {
    g.nodes.push({
      id: service.name,
      lines: [service.name, ...model.servers.map((x) => `${x.kind}[${x.name}] :${x.port}`)],
      shape: 'service',
    });
    for (const entry of service.public)
      g.edges.push({ from: 'ingress', to: service.name, label: `public: ${entry}` });
  }
  for (const w of wires)
    g.edges.push({
      from: w.caller,
      to: w.callee,
      label: `${w.client.kind === 'grpcclient' ? 'gRPC' : 'HTTP'} (${w.client.kind}[${w.client.name}])`,
    });
  for (const { service, model } of services)
    for (const st of model.stores) {
      const id = `${service.name}/${st.kind}/${st.name}`;
      g.nodes.push({ id, lines: [st.name, st.kind], shape: 'store' });
      g.edges.push({ from: service.name, to: id, label: st.kind });
    }
  return g;
}

const NAME = 'app.kubernetes.io/name';

/**
 * The fence of one service: an ingress NetworkPolicy admitting, on each port, only the pods the
 * system file says call it (each caller on the entries it calls), the metrics scraper on the
 * ports serving /metrics, and the ingress controller on the entries listed as public. Probes come
 * from the node (the kubelet), which NetworkPolicy does not apply to; no egress rules, so DNS and
 * the backing stores stay reachable.
 */
export function networkPolicy(
  system: SystemDescription,
  service: SystemService,
  model: ServiceModel,
  manifests: Manifests,
  wires: readonly Wire[],
  ns: string,
): K8sObject {
  const port = (entry: string) => ({ port: manifests.portNames[entry] ?? entry, protocol: 'TCP' });
  const peer = (p: { namespace: string; pods: Record<string, string> }) => ({
    namespaceSelector: { matchLabels: { 'kubernetes.io/metadata.name': p.namespace } },
    podSelector: { matchLabels: p.pods },
  });
  const rules: Array<Record<string, unknown>> = [];
  const callers = [...new Set(wires.filter((w) => w.callee === service.name).map((w) => w.caller))];
  for (const caller of callers) {
    const entries = [
      ...new Set(
        wires
          .filter((w) => w.callee === service.name && w.caller === caller)
          .map((w) => w.server.name),
      ),
    ];
    rules.push({
      from: [{ podSelector: { matchLabels: { [NAME]: caller } } }],
      ports: entries.map(port),
    });
  }
  const scraped = model.servers.filter((x) => x.metricsPath !== undefined).map((x) => x.name);
  if (scraped.length > 0)
    rules.push({ from: [peer(system.fences.scraper)], ports: scraped.map(port) });
  for (const entry of service.public)
    if (!model.servers.some((x) => x.name === entry))
      throw deployError(
        'SVC_CLI_DEPLOY_SYSTEM_WIRING',
        `${service.name}: public names "${entry}", which is no server entry of ${service.config} (it has ${model.servers.map((x) => x.name).join(', ') || 'none'})`,
      );
  // A public grpc entry's rk-boot gwPort (porting mode) serves its gateway too: public as well.
  const publicPorts = service.public.flatMap((entry) => [
    entry,
    ...model.servers.filter((x) => x.gatewayOf === entry).map((x) => x.name),
  ]);
  if (publicPorts.length > 0)
    rules.push({ from: [peer(system.fences.ingress)], ports: publicPorts.map(port) });
  const labels = manifests.objects.find((o) => o.kind === 'Deployment')?.metadata.labels;
  return {
    apiVersion: 'networking.k8s.io/v1',
    kind: 'NetworkPolicy',
    metadata: { name: service.name, namespace: ns, ...(labels ? { labels } : {}) },
    spec: {
      podSelector: { matchLabels: { [NAME]: service.name } },
      policyTypes: ['Ingress'],
      ingress: rules,
    },
  };
}
