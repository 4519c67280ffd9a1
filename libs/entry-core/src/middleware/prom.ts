import type { Registry } from 'prom-client';
import { CallCounter, CallHistogram, RecentSummary, type CounterChild, type ObserverChild } from './call-metrics.js';
import type { CallContext, CallInfo, CallMiddleware } from './call.js';

interface CallChildren {
  elapsed: ObserverChild;
  resCode: CounterChild;
  handled?: CounterChild;
}

interface GrpcChildren {
  started: CounterChild;
  handling: ObserverChild;
}

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
  private readonly resCodes: CallCounter<(typeof CALL_LABELS)[number]>;
  private readonly started?: CallCounter<(typeof GRPC_LABELS)[number]>;
  private readonly handled?: CallCounter<(typeof GRPC_LABELS)[number] | 'grpc_code'>;
  private readonly handling?: CallHistogram<(typeof GRPC_LABELS)[number]>;
  // A call's children: by RPC (a gRPC call's operation) or by route (method and template, for
  // HTTP and gateway calls; bounded, unlike paths), then by result code.
  private readonly children = new Map<string, Map<string, CallChildren>>();
  private readonly grpcChildren = new Map<string, GrpcChildren>();

  constructor(private readonly options: PromMiddlewareOptions) {
    const registry = options.registry;
    this.elapsed = new RecentSummary(
      'svc_call_elapsed_seconds',
      'Time to handle a call, in seconds, by entry, method and result code (quantiles over the latest 1024 calls).',
      CALL_LABELS,
      [0.5, 0.9, 0.99],
      registry,
    );
    this.resCodes = new CallCounter('svc_call_res_code_total', 'Calls handled, by entry, method and result code.', CALL_LABELS, registry);
    if (options.grpcFamilies) {
      this.started = new CallCounter('grpc_server_started_total', 'Total number of RPCs started on the server.', GRPC_LABELS, registry);
      this.handled = new CallCounter(
        'grpc_server_handled_total',
        'Total number of RPCs completed on the server, regardless of success or failure.',
        [...GRPC_LABELS, 'grpc_code'],
        registry,
      );
      this.handling = new CallHistogram(
        'grpc_server_handling_seconds',
        'Histogram of response latency (seconds) of gRPC that had been application-level handled by the server.',
        GRPC_LABELS,
        [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10],
        registry,
      );
    }
  }

  before(call: CallContext): void {
    if (this.started) this.grpcFor(call.info)?.started.inc();
  }

  after(call: CallContext): void {
    const seconds = Number(process.hrtime.bigint() - call.startHr) / 1e9;
    const i = call.info;
    const key = i.restPath === undefined ? i.operation : `${i.gwMethod ?? i.apiMethod} ${i.restPath}`;
    let byCode = this.children.get(key);
    if (!byCode) this.children.set(key, (byCode = new Map()));
    let child = byCode.get(call.resCode);
    if (!child) byCode.set(call.resCode, (child = this.newChildren(i, call.resCode)));
    child.elapsed.observe(seconds);
    child.resCode.inc();
    if (child.handled) {
      child.handled.inc();
      this.grpcFor(i)?.handling.observe(seconds);
    }
  }

  private newChildren(i: CallInfo, resCode: string): CallChildren {
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
      res_code: resCode,
    };
    const child: CallChildren = { elapsed: this.elapsed.labels(labels), resCode: this.resCodes.labels(labels) };
    if (this.handled && i.grpcType) {
      child.handled = this.handled.labels({
        grpc_type: grpcTypeLabel(i.grpcType),
        grpc_service: i.grpcService ?? '',
        grpc_method: i.grpcMethod ?? '',
        grpc_code: resCode,
      });
    }
    return child;
  }

  /** The grpc_server_* children of an RPC; one RPC (operation) has one service, method and type. */
  private grpcFor(i: CallInfo): GrpcChildren | undefined {
    if (!i.grpcType || !this.started || !this.handling) return undefined;
    let g = this.grpcChildren.get(i.operation);
    if (!g) {
      const labels = { grpc_type: grpcTypeLabel(i.grpcType), grpc_service: i.grpcService ?? '', grpc_method: i.grpcMethod ?? '' };
      g = { started: this.started.labels(labels), handling: this.handling.labels(labels) };
      this.grpcChildren.set(i.operation, g);
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
