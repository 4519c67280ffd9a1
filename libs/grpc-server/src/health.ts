import type {
  MethodDefinition,
  ServerUnaryCall,
  ServerWritableStream,
  ServiceDefinition,
  UntypedServiceImplementation,
  sendUnaryData,
} from '@grpc/grpc-js';
import { fromJSON, type PackageDefinition } from '@grpc/proto-loader';

/** grpc.health.v1 (health.proto), as a protobufjs JSON descriptor. */
const HEALTH_JSON = {
  nested: {
    grpc: {
      nested: {
        health: {
          nested: {
            v1: {
              nested: {
                HealthCheckRequest: { fields: { service: { type: 'string', id: 1 } } },
                HealthCheckResponse: {
                  fields: { status: { type: 'ServingStatus', id: 1 } },
                  nested: {
                    ServingStatus: {
                      values: { UNKNOWN: 0, SERVING: 1, NOT_SERVING: 2, SERVICE_UNKNOWN: 3 },
                    },
                  },
                },
                Health: {
                  methods: {
                    Check: {
                      requestType: 'HealthCheckRequest',
                      responseType: 'HealthCheckResponse',
                    },
                    Watch: {
                      requestType: 'HealthCheckRequest',
                      responseType: 'HealthCheckResponse',
                      responseStream: true,
                    },
                  },
                },
              },
            },
          },
        },
      },
    },
  },
};

/**
 * A method of grpc.health.v1.Health whose path, streaming flags and names are known at once and
 * whose (de)serializers are those of proto-loader's definition (`coded`), looked up when first
 * called. It has no `requestType` (proto-loader's descriptors): reflection asks
 * `HealthService.fileDescriptorProtos()`.
 */
function lazyMethod(
  coded: () => ServiceDefinition,
  name: 'Check' | 'Watch',
  responseStream: boolean,
): MethodDefinition<unknown, unknown> {
  const method = () => coded()[name] as MethodDefinition<unknown, unknown>;
  return {
    path: `/grpc.health.v1.Health/${name}`,
    requestStream: false,
    responseStream,
    originalName: name.toLowerCase(),
    requestSerialize: (value) => method().requestSerialize(value),
    requestDeserialize: (bytes) => method().requestDeserialize(bytes),
    responseSerialize: (value) => method().responseSerialize(value),
    responseDeserialize: (bytes) => method().responseDeserialize(bytes),
  };
}

/** Watch streams see a dependency go down or come back within this long. */
export const WATCH_POLL_MS = 1000;

type ServingStatus = 'SERVING' | 'NOT_SERVING' | 'SERVICE_UNKNOWN';
interface HealthRequest {
  service: string;
}

/**
 * The standard health service: `""` and every registered service are SERVING while the app is
 * ready, NOT_SERVING before and while draining; unknown names are NOT_FOUND (Check) or
 * SERVICE_UNKNOWN (Watch).
 */
export class HealthService {
  /**
   * health.proto through proto-loader (protobufjs's codec, keepCase, enums as names, defaults),
   * built when a health call is first coded or reflection describes it, not at every start (~5 ms
   * of a start on Node 26: BENCHMARKS.md, "Session 18").
   */
  private loaded: PackageDefinition | undefined;
  private readonly service = (): ServiceDefinition =>
    this.packageDefinition['grpc.health.v1.Health'] as ServiceDefinition;

  /** The service as a grpc-js definition: paths and streaming flags now, its codec on first use. */
  readonly definition: ServiceDefinition = {
    Check: lazyMethod(this.service, 'Check', false),
    Watch: lazyMethod(this.service, 'Watch', true),
  };
  private readonly watchers = new Set<{
    service: string;
    call: ServerWritableStream<HealthRequest, unknown>;
    last: string;
  }>();

  /** While Watch streams are open: re-reads the status, since a dependency can go down any time. */
  private poll: NodeJS.Timeout | undefined;

  constructor(
    private readonly isServing: () => boolean,
    private readonly knows: (service: string) => boolean,
    /** How often open Watch streams re-read the status (dependencies report no events here). */
    private readonly pollMs = WATCH_POLL_MS,
  ) {}

  /** health.proto as proto-loader defines it (its codec, its descriptors): built on first use. */
  get packageDefinition(): PackageDefinition {
    this.loaded ??= fromJSON(HEALTH_JSON as unknown as Parameters<typeof fromJSON>[0], {
      keepCase: true,
      enums: String,
      defaults: true,
    });
    return this.loaded;
  }

  /** health.proto's FileDescriptorProto, serialized, for reflection. */
  fileDescriptorProtos(): Buffer[] {
    const check = this.service()['Check'] as { requestType?: { fileDescriptorProtos?: Buffer[] } };
    return check.requestType?.fileDescriptorProtos ?? [];
  }

  status(service: string): ServingStatus {
    if (service !== '' && !this.knows(service)) return 'SERVICE_UNKNOWN';
    return this.isServing() ? 'SERVING' : 'NOT_SERVING';
  }

  /** Tells Watch streams about a change of readiness. */
  notify(): void {
    for (const w of this.watchers) {
      const now = this.status(w.service);
      if (now !== w.last) {
        w.last = now;
        w.call.write({ status: now });
      }
    }
  }

  /** Ends Watch streams so that draining does not wait on them. */
  endWatches(): void {
    for (const w of this.watchers) w.call.end();
    this.watchers.clear();
    this.watching();
  }

  /** Starts the poll with the first Watch stream, stops it with the last. */
  private watching(): void {
    if (this.watchers.size > 0 && this.poll === undefined) {
      this.poll = setInterval(() => this.notify(), this.pollMs);
      this.poll.unref();
    } else if (this.watchers.size === 0 && this.poll !== undefined) {
      clearInterval(this.poll);
      this.poll = undefined;
    }
  }

  get implementation(): UntypedServiceImplementation {
    return {
      Check: (call: ServerUnaryCall<HealthRequest, unknown>, callback: sendUnaryData<unknown>) => {
        const s = this.status(call.request.service);
        if (s === 'SERVICE_UNKNOWN')
          callback({ code: 5, details: `unknown service ${call.request.service}` });
        else callback(null, { status: s });
      },
      Watch: (call: ServerWritableStream<HealthRequest, unknown>) => {
        const w = { service: call.request.service, call, last: this.status(call.request.service) };
        this.watchers.add(w);
        this.watching();
        call.write({ status: w.last });
        call.on('cancelled', () => {
          this.watchers.delete(w);
          this.watching();
        });
      },
    };
  }
}
