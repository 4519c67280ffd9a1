import { Counter, Histogram, type Registry } from 'prom-client';
import { RecentSummary } from './recent-summary.js';
import type { CallContext, CallMiddleware } from './call.js';

export interface PromMiddlewareOptions {
  registry: Registry;
  entryName: string;
  entryType: string;
  domain: string;
  instance: string;
  /** Also record the standard grpc_server_* families (gRPC entries). */
  grpcFamilies: boolean;
}

/**
 * The call labels: entryName, entryType, domain, instance, grpcService, grpcMethod, grpcType,
 * restMethod, restPath and resCode, spelt snake_case as Prometheus (and `promtool check metrics`)
 * requires of label names.
 */
const CALL_LABELS = [
  'entry_name',
  'entry_type',
  'domain',
  'instance',
  'grpc_service',
  'grpc_method',
  'grpc_type',
  'rest_method',
  'rest_path',
  'res_code',
] as const;
const GRPC_LABELS = ['grpc_type', 'grpc_service', 'grpc_method'] as const;

/** Per-call metrics into the entry's own prom-client registry. */
export class PromMiddleware implements CallMiddleware {
  private readonly elapsed: RecentSummary<(typeof CALL_LABELS)[number]>;
  private readonly resCodes: Counter<(typeof CALL_LABELS)[number]>;
  private readonly started?: Counter<(typeof GRPC_LABELS)[number]>;
  private readonly handled?: Counter<(typeof GRPC_LABELS)[number] | 'grpc_code'>;
  private readonly handling?: Histogram<(typeof GRPC_LABELS)[number]>;
  // prom-client hashes labels on every lookup; a call's children are cached by their label values.
  private readonly children = new Map<string, { elapsed: { observe(v: number): void }; resCode: { inc(): void }; handled?: { inc(): void } }>();
  private readonly grpcChildren = new Map<string, { started: { inc(): void }; handling: { observe(v: number): void } }>();

  constructor(private readonly options: PromMiddlewareOptions) {
    const registers = [options.registry];
    this.elapsed = new RecentSummary(
      'svc_call_elapsed_seconds',
      'Time to handle a call, in seconds, by entry, method and result code (quantiles over the latest 1024 calls).',
      CALL_LABELS,
      [0.5, 0.9, 0.99],
      options.registry,
    );
    this.resCodes = new Counter({
      name: 'svc_call_res_code_total',
      help: 'Calls handled, by entry, method and result code.',
      labelNames: CALL_LABELS,
      registers,
    });
    if (options.grpcFamilies) {
      this.started = new Counter({
        name: 'grpc_server_started_total',
        help: 'Total number of RPCs started on the server.',
        labelNames: GRPC_LABELS,
        registers,
      });
      this.handled = new Counter({
        name: 'grpc_server_handled_total',
        help: 'Total number of RPCs completed on the server, regardless of success or failure.',
        labelNames: [...GRPC_LABELS, 'grpc_code'],
        registers,
      });
      this.handling = new Histogram({
        name: 'grpc_server_handling_seconds',
        help: 'Histogram of response latency (seconds) of gRPC that had been application-level handled by the server.',
        labelNames: GRPC_LABELS,
        buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10],
        registers,
      });
    }
  }

  before(call: CallContext): void {
    if (!this.started) return;
    this.grpcFor(call)?.started.inc();
  }

  after(call: CallContext): void {
    const seconds = Number(process.hrtime.bigint() - call.startHr) / 1e9;
    const i = call.info;
    const key = `${i.grpcService ?? ''}\u0000${i.grpcMethod ?? ''}\u0000${i.apiMethod}\u0000${i.restPath ?? ''}\u0000${call.resCode}`;
    let child = this.children.get(key);
    if (!child) {
      const labels = {
        entry_name: this.options.entryName,
        entry_type: this.options.entryType,
        domain: this.options.domain,
        instance: this.options.instance,
        grpc_service: i.grpcService ?? '',
        grpc_method: i.grpcMethod ?? '',
        grpc_type: i.grpcType ?? '',
        rest_method: i.gwMethod ?? (i.grpcType ? '' : i.apiMethod),
        rest_path: i.restPath ?? '',
        res_code: call.resCode,
      };
      child = { elapsed: this.elapsed.labels(labels), resCode: this.resCodes.labels(labels) };
      if (this.handled && i.grpcType) {
        child.handled = this.handled.labels({
          grpc_type: grpcTypeLabel(i.grpcType),
          grpc_service: i.grpcService ?? '',
          grpc_method: i.grpcMethod ?? '',
          grpc_code: call.resCode,
        });
      }
      this.children.set(key, child);
    }
    child.elapsed.observe(seconds);
    child.resCode.inc();
    if (child.handled) {
      child.handled.inc();
      this.grpcFor(call)?.handling.observe(seconds);
    }
  }

  private grpcFor(call: CallContext): { started: { inc(): void }; handling: { observe(v: number): void } } | undefined {
    const i = call.info;
    if (!i.grpcType || !this.started || !this.handling) return undefined;
    const key = `${i.grpcService}\u0000${i.grpcMethod}\u0000${i.grpcType}`;
    let g = this.grpcChildren.get(key);
    if (!g) {
      const labels = { grpc_type: grpcTypeLabel(i.grpcType), grpc_service: i.grpcService ?? '', grpc_method: i.grpcMethod ?? '' };
      g = { started: this.started.labels(labels), handling: this.handling.labels(labels) };
      this.grpcChildren.set(key, g);
    }
    return g;
  }
}

/** go-grpc-prometheus spells types `unary`, `server_stream`, `client_stream`, `bidi_stream`. */
function grpcTypeLabel(t: string): string {
  switch (t) {
    case 'UnaryServer':
      return 'unary';
    case 'ServerStream':
      return 'server_stream';
    case 'ClientStream':
      return 'client_stream';
    case 'BidiStream':
      return 'bidi_stream';
    default:
      return t;
  }
}
