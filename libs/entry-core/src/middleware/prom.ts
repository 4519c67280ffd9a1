import type { Registry } from 'prom-client';
import {
  CallCounter,
  RecentSummary,
  sharedFamily,
  type CounterChild,
  type ObserverChild,
} from './call-metrics.js';
import type { CallContext, CallMiddleware } from './call.js';
import { CallRejection } from './rejection.js';
import { isIgnored } from './definition.js';
import { HTTP_REQUEST } from '../call/http-request.js';
import { RPC_METHOD } from '../call/rpc-method.js';
import type { TransportMetrics } from './transport.js';

interface CallChildren {
  elapsed: ObserverChild;
  resCode: CounterChild;
}

export interface PromMiddlewareOptions {
  registry: Registry;
  entryName: string;
  entryType: string;
  domain: string;
  instance: string;
  /** The transport's own families (e.g. entry-grpc's grpc_server_*), fed on every call. */
  transport?: TransportMetrics;
  /** Calls that are not counted (`middleware.prom.ignore`). */
  ignore?: readonly string[];
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

/** Per-call metrics into the entry's own prom-client registry. */
export class PromMiddleware implements CallMiddleware {
  private readonly elapsed: RecentSummary<(typeof CALL_LABELS)[number]>;
  private readonly resCodes: CallCounter<(typeof CALL_LABELS)[number]>;
  private readonly transport: TransportMetrics | undefined;
  private readonly rejections: CallCounter<'entry_name' | 'middleware' | 'reason'>;
  private readonly rejectionChildren = new Map<string, CounterChild>();
  // A call's children: by RPC (a gRPC call's operation) or by route (template and method, for
  // HTTP and gateway calls; bounded, unlike paths), then by result code.
  private readonly children = new Map<string, Map<string, CallChildren>>();
  private readonly routeChildren = new Map<string, Map<string, Map<string, CallChildren>>>();

  private readonly ignore: readonly string[];

  constructor(private readonly options: PromMiddlewareOptions) {
    this.ignore = options.ignore ?? [];
    const registry = options.registry;
    // Shared with the other entries on this registry (a client entry's `metricsEntry`).
    this.elapsed = sharedFamily(
      registry,
      'svc_call_elapsed_seconds',
      RecentSummary<(typeof CALL_LABELS)[number]>,
      () =>
        new RecentSummary(
          'svc_call_elapsed_seconds',
          'Time to handle a call, in seconds, by entry, method and result code (quantiles over the latest 1024 calls).',
          CALL_LABELS,
          [0.5, 0.9, 0.99],
          registry,
        ),
    );
    this.resCodes = sharedFamily(
      registry,
      'svc_call_res_code_total',
      CallCounter<(typeof CALL_LABELS)[number]>,
      () =>
        new CallCounter(
          'svc_call_res_code_total',
          'Calls handled, by entry, method and result code.',
          CALL_LABELS,
          registry,
        ),
    );
    this.transport = options.transport;
    this.rejections = sharedFamily(
      registry,
      'svc_call_rejections_total',
      CallCounter<'entry_name' | 'middleware' | 'reason'>,
      () =>
        new CallCounter(
          'svc_call_rejections_total',
          'Calls a middleware refused before the handler, by entry, middleware and reason.',
          ['entry_name', 'middleware', 'reason'],
          registry,
        ),
    );
  }

  before(call: CallContext): void {
    if (this.ignore.length > 0 && isIgnored(this.ignore, call)) return;
    this.transport?.before?.(call);
  }

  after(call: CallContext): void {
    if (this.ignore.length > 0 && isIgnored(this.ignore, call)) return;
    const seconds = Number(process.hrtime.bigint() - call.startHr) / 1e9;
    const i = call.info;
    let byCode: Map<string, CallChildren> | undefined;
    if (i.restPath === undefined) {
      byCode = this.children.get(i.operation);
      if (!byCode) this.children.set(i.operation, (byCode = new Map()));
    } else {
      // By template, then method: strings the call holds, no key built per call.
      const method = call.get(HTTP_REQUEST)?.method ?? i.apiMethod;
      let byMethod = this.routeChildren.get(i.restPath);
      if (!byMethod) this.routeChildren.set(i.restPath, (byMethod = new Map()));
      byCode = byMethod.get(method);
      if (!byCode) byMethod.set(method, (byCode = new Map()));
    }
    let child = byCode.get(call.resCode);
    if (!child) byCode.set(call.resCode, (child = this.newChildren(call)));
    child.elapsed.observe(seconds);
    child.resCode.inc();
    const error = call.rejection ?? call.error;
    if (error instanceof CallRejection && error.source) this.countRejection(error);
    this.transport?.after(call, seconds);
  }

  private countRejection(error: CallRejection): void {
    const { middleware, reason } = error.source!;
    const key = `${middleware} ${reason}`;
    let child = this.rejectionChildren.get(key);
    if (!child) {
      child = this.rejections.labels({ entry_name: this.options.entryName, middleware, reason });
      this.rejectionChildren.set(key, child);
    }
    child.inc();
  }

  private newChildren(call: CallContext): CallChildren {
    const i = call.info;
    const rpc = call.get(RPC_METHOD);
    const http = call.get(HTTP_REQUEST);
    const labels = {
      entry_name: this.options.entryName,
      entry_type: this.options.entryType,
      domain: this.options.domain,
      instance: this.options.instance,
      grpc_service: rpc?.service ?? '',
      grpc_method: rpc?.method ?? '',
      grpc_type: rpc?.type ?? '',
      rest_method: http?.method ?? (rpc?.type ? '' : i.apiMethod),
      rest_path: i.restPath ?? '',
      res_code: call.resCode,
    };
    return { elapsed: this.elapsed.labels(labels), resCode: this.resCodes.labels(labels) };
  }
}
