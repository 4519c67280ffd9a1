import type {
  MethodDefinition,
  ServiceDefinition,
  UntypedHandleCall,
  UntypedServiceImplementation,
} from '@grpc/grpc-js';
import { splitPath } from './call-info.js';
import { withProtojsonMapKeys } from './map-keys.js';
import { withRecovery, type RecoveredListener } from './recovery.js';

/** One RPC of a service added to the entry, with the user's handler. */
export interface RegisteredMethod {
  /** `/api.v1.Greeter/Hello` */
  path: string;
  service: string;
  name: string;
  definition: MethodDefinition<unknown, unknown>;
  handler: UntypedHandleCall | undefined;
}

/** Services added with `addService`, kept for the gateway, reflection and OpenAPI. */
export class ServiceSet {
  readonly definitions: Array<{
    definition: ServiceDefinition;
    implementation: UntypedServiceImplementation;
  }> = [];
  readonly methods = new Map<string, RegisteredMethod>();

  /** `onRecovered`: told of each exception a handler throws (see withRecovery); none, no wrapping. */
  constructor(private readonly onRecovered?: RecoveredListener) {}

  add(given: ServiceDefinition, implementation: UntypedServiceImplementation): void {
    // Handlers of proto-loader definitions see 64-bit map keys as decimal strings (map-keys.ts).
    const definition = withProtojsonMapKeys(given);
    // What the server and the gateway call: the handlers, wrapped for recovery.
    const served: UntypedServiceImplementation = {};
    for (const [key, def] of Object.entries(definition) as Array<
      [string, MethodDefinition<unknown, unknown>]
    >) {
      if (this.methods.has(def.path))
        throw new Error(`addService: ${def.path} is already registered`);
      const { service, method } = splitPath(def.path);
      const own = (implementation[key] ??
        (def.originalName ? implementation[def.originalName] : undefined)) as
        | UntypedHandleCall
        | undefined;
      const handler = own && this.onRecovered ? withRecovery(own, def, this.onRecovered) : own;
      if (handler) served[key] = handler;
      this.methods.set(def.path, {
        path: def.path,
        service,
        name: method,
        definition: def,
        handler,
      });
    }
    this.definitions.push({ definition, implementation: served });
  }

  /** `api.v1.Greeter.Hello` (a rule selector) → the method. */
  bySelector(selector: string): RegisteredMethod | undefined {
    const dot = selector.lastIndexOf('.');
    return this.methods.get(`/${selector.slice(0, dot)}/${selector.slice(dot + 1)}`);
  }

  serviceNames(): string[] {
    return [...new Set([...this.methods.values()].map((m) => m.service))];
  }
}
