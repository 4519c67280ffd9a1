import protobuf from 'protobufjs';
import {
  DEFAULT_MAX_JSON_DEPTH,
  anyToJson,
  checkJsonDepth,
  jsonToPlain,
  messageToJson,
  statusDetailsOf,
  type MarshalOptions,
  type RegisteredMethod,
} from '@svcboot/grpc-server/protocol';
import { ConnectFailure, base64Raw, type ConnectDetail } from './protocol.js';

/** How Connect JSON is written: protojson's defaults (what connect-es writes), Any resolved. */
const BASE_MARSHAL: MarshalOptions = {
  useProtoNames: false,
  emitUnpopulated: false,
  useEnumNumbers: false,
};

/**
 * One RPC as the Connect adapter sees it: its kind, whether GET may call it, and the JSON mapping
 * of its messages (the gateway's protojson mapping, on the method's protobufjs types, for typed and
 * proto-loader services alike). The bytes on the gRPC side are always binary protobuf.
 */
export class ConnectMethod {
  readonly requestStream: boolean;
  readonly responseStream: boolean;
  /** `option idempotency_level = NO_SIDE_EFFECTS`: GET requests are served. */
  readonly noSideEffects: boolean;
  private readonly requestType: protobuf.Type | undefined;
  private readonly responseType: protobuf.Type | undefined;
  private readonly marshal: MarshalOptions;

  constructor(
    readonly method: RegisteredMethod,
    root: protobuf.Root | undefined,
    private readonly maxJsonDepth = DEFAULT_MAX_JSON_DEPTH,
  ) {
    this.requestStream = method.definition.requestStream;
    this.responseStream = method.definition.responseStream;
    let rpc: protobuf.Method | undefined;
    try {
      rpc = root?.lookupService(method.service).methods[method.name];
    } catch {
      // Not in the schema: binary calls only.
    }
    this.requestType = rpc
      ? (rpc.resolvedRequestType ?? root!.lookupType(rpc.requestType))
      : undefined;
    this.responseType = rpc
      ? (rpc.resolvedResponseType ?? root!.lookupType(rpc.responseType))
      : undefined;
    const level = rpc?.options?.['idempotency_level'] as unknown;
    this.noSideEffects = level === 'NO_SIDE_EFFECTS' || level === 1;
    const resolve = (name: string): protobuf.Type | undefined => {
      const t = root?.lookup(name);
      return t instanceof protobuf.Type ? t : undefined;
    };
    const marshal: MarshalOptions = { ...BASE_MARSHAL };
    marshal.anyToJson = (url, value) => anyToJson(url, value, resolve, marshal);
    this.marshal = marshal;
  }

  /** A request message in JSON as the binary protobuf the handler's deserializer takes. */
  requestFromJson(text: string): Buffer {
    const type = this.described(this.requestType);
    let plain: unknown;
    try {
      checkJsonDepth(text, this.maxJsonDepth, 'the request message');
      plain = jsonToPlain(type, text.length === 0 ? {} : JSON.parse(text), false);
      const bytes = type.encode(type.fromObject(plain as Record<string, unknown>)).finish();
      return Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
    } catch (err) {
      throw new ConnectFailure(
        3,
        `cannot decode the request message as JSON: ${err instanceof Error ? err.message : String(err)}`,
      );
    }
  }

  /** A response message's binary protobuf as JSON text. */
  responseToJson(bytes: Uint8Array): string {
    const type = this.described(this.responseType);
    const msg = type.decode(bytes) as unknown as Record<string, unknown>;
    return JSON.stringify(messageToJson(type, msg, this.marshal));
  }

  /** `type`, or the Connect error for a method JSON cannot call (its types were not found). */
  private described(type: protobuf.Type | undefined): protobuf.Type {
    if (type) return type;
    throw new ConnectFailure(
      12,
      `${this.method.path} has no descriptor in the entry's protos: only application/proto can call it`,
    );
  }

  /** Whether JSON can be served (the method's types were found). */
  get json(): boolean {
    return this.requestType !== undefined && this.responseType !== undefined;
  }
}

/** The details of `grpc-status-details-bin` (a google.rpc.Status) as Connect's error details. */
export function connectDetails(bin: Buffer | undefined): ConnectDetail[] {
  if (bin === undefined || bin.length === 0) return [];
  return statusDetailsOf(bin).map((d) => {
    const url = d.type_url ?? '';
    return {
      type: url.slice(url.lastIndexOf('/') + 1),
      value: base64Raw(d.value ?? new Uint8Array()),
    };
  });
}
