/**
 * `grpc.testing.TestService` as doc/interop-test-descriptions.md's "Server" section describes it
 * (EmptyCall, UnaryCall, StreamingOutputCall, StreamingInputCall, FullDuplexCall, HalfDuplexCall;
 * CompressedRequest, CompressedResponse, Echo Status, Echo Metadata, interval_us), written over
 * the native server's call. UnimplementedCall is left out on purpose.
 */
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { Metadata, status as Status } from '@grpc/grpc-js';
import protobuf from 'protobufjs';
import type { NativeCall, NativeMethodShape, NativeStatus } from '../call.js';

export const TESTDATA = path.dirname(fileURLToPath(import.meta.url));

/** The interop protos, loaded by protobufjs (imports resolved under test-support/). */
export function loadInteropRoot(): protobuf.Root {
  const root = new protobuf.Root();
  root.resolvePath = (_origin, target) =>
    path.isAbsolute(target) ? target : path.join(TESTDATA, target);
  root.loadSync('src/proto/grpc/testing/test.proto', { keepCase: false });
  return root;
}

interface BoolValue {
  value?: boolean;
}
interface EchoStatus {
  code?: number;
  message?: string;
}
interface Payload {
  type?: number;
  body?: Uint8Array;
}
interface ResponseParameters {
  size?: number;
  intervalUs?: number;
  compressed?: BoolValue | null;
}
interface SimpleRequest {
  responseType?: number;
  responseSize?: number;
  payload?: Payload | null;
  responseCompressed?: BoolValue | null;
  responseStatus?: EchoStatus | null;
  expectCompressed?: BoolValue | null;
}
interface StreamingOutputCallRequest {
  responseType?: number;
  responseParameters?: ResponseParameters[];
  payload?: Payload | null;
  responseStatus?: EchoStatus | null;
}
interface StreamingInputCallRequest {
  payload?: Payload | null;
  expectCompressed?: BoolValue | null;
}

export interface InteropMethod extends NativeMethodShape {
  readonly run: (call: NativeCall<InteropMethod>) => Promise<void> | void;
}

const ECHO_INITIAL = 'x-grpc-test-echo-initial';
const ECHO_TRAILING = 'x-grpc-test-echo-trailing-bin';

function echoedInitial(call: NativeCall): Metadata | undefined {
  const values = call.metadata.get(ECHO_INITIAL);
  if (values.length === 0) return undefined;
  const md = new Metadata();
  for (const v of values) md.add(ECHO_INITIAL, v);
  return md;
}

function echoedTrailing(call: NativeCall): Metadata | undefined {
  const values = call.metadata.get(ECHO_TRAILING);
  if (values.length === 0) return undefined;
  const md = new Metadata();
  for (const v of values) md.add(ECHO_TRAILING, v);
  return md;
}

function sleep(us: number, signal: AbortSignal): Promise<void> {
  if (us <= 0) return Promise.resolve();
  return new Promise((resolve) => {
    const t = setTimeout(resolve, Math.ceil(us / 1000));
    signal.addEventListener(
      'abort',
      () => {
        clearTimeout(t);
        resolve();
      },
      { once: true },
    );
  });
}

/** The service's methods by path, for NativeGrpcServer's resolve. */
export function interopMethods(root = loadInteropRoot()): Map<string, InteropMethod> {
  const type = (name: string) => root.lookupType(`grpc.testing.${name}`);
  const SimpleRequestT = type('SimpleRequest');
  const SimpleResponseT = type('SimpleResponse');
  const StreamingOutputCallRequestT = type('StreamingOutputCallRequest');
  const StreamingOutputCallResponseT = type('StreamingOutputCallResponse');
  const StreamingInputCallRequestT = type('StreamingInputCallRequest');
  const StreamingInputCallResponseT = type('StreamingInputCallResponse');

  const decode = <T>(t: protobuf.Type, bytes: Uint8Array): T =>
    t.toObject(t.decode(bytes), { defaults: false }) as T;
  const payload = (size: number) => ({ type: 0, body: Buffer.alloc(size) });

  /** The status a request asks for (Echo Status), or undefined for none. */
  const echoStatus = (
    s: EchoStatus | null | undefined,
    call: NativeCall,
  ): NativeStatus | undefined =>
    s && (s.code ?? 0) !== 0
      ? { code: s.code ?? 0, message: s.message ?? '', trailers: echoedTrailing(call) }
      : undefined;

  /** Sends the responses one request's parameters describe; false when the call went away. */
  const respond = async (
    call: NativeCall<InteropMethod>,
    params: ResponseParameters[] | undefined,
  ): Promise<boolean> => {
    for (const p of params ?? []) {
      await sleep(p.intervalUs ?? 0, call.signal);
      if (call.cancelled || call.isEnded) return false;
      const bytes = StreamingOutputCallResponseT.encode({ payload: payload(p.size ?? 0) }).finish();
      const compress = p.compressed ? p.compressed.value === true : undefined;
      if (!call.send(bytes, compress)) await call.drained();
    }
    return !call.cancelled && !call.isEnded;
  };

  const notCompressed = (call: NativeCall, expect: BoolValue | null | undefined): boolean =>
    expect?.value === true && !call.requestCompressed;

  const methods = new Map<string, InteropMethod>();
  const add = (
    name: string,
    requestStream: boolean,
    responseStream: boolean,
    run: InteropMethod['run'],
  ) => methods.set(`/grpc.testing.TestService/${name}`, { requestStream, responseStream, run });

  add('EmptyCall', false, false, (call) => {
    call.sendHeaders(echoedInitial(call));
    call.send(new Uint8Array(0));
    call.end({ code: Status.OK, trailers: echoedTrailing(call) });
  });

  add('UnaryCall', false, false, (call) => {
    const req = decode<SimpleRequest>(SimpleRequestT, call.request);
    if (notCompressed(call, req.expectCompressed)) {
      call.end({ code: Status.INVALID_ARGUMENT, message: 'Expected a compressed request' });
      return;
    }
    if ((req.responseType ?? 0) !== 0) {
      call.end({ code: Status.INVALID_ARGUMENT, message: 'Unsupported response_type' });
      return;
    }
    call.sendHeaders(echoedInitial(call));
    const status = echoStatus(req.responseStatus, call);
    if (status) {
      call.end(status);
      return;
    }
    const bytes = SimpleResponseT.encode({ payload: payload(req.responseSize ?? 0) }).finish();
    call.send(bytes, req.responseCompressed ? req.responseCompressed.value === true : undefined);
    call.end({ code: Status.OK, trailers: echoedTrailing(call) });
  });

  add('StreamingOutputCall', false, true, async (call) => {
    const req = decode<StreamingOutputCallRequest>(StreamingOutputCallRequestT, call.request);
    call.sendHeaders(echoedInitial(call));
    if (!(await respond(call, req.responseParameters))) return;
    call.end(
      echoStatus(req.responseStatus, call) ?? { code: Status.OK, trailers: echoedTrailing(call) },
    );
  });

  add('StreamingInputCall', true, false, async (call) => {
    let total = 0;
    for await (const bytes of call.messages()) {
      const req = decode<StreamingInputCallRequest>(StreamingInputCallRequestT, bytes);
      if (notCompressed(call, req.expectCompressed)) {
        call.end({ code: Status.INVALID_ARGUMENT, message: 'Expected a compressed request' });
        return;
      }
      total += req.payload?.body?.length ?? 0;
    }
    if (call.cancelled) return;
    call.sendHeaders(echoedInitial(call));
    call.send(StreamingInputCallResponseT.encode({ aggregatedPayloadSize: total }).finish());
    call.end({ code: Status.OK, trailers: echoedTrailing(call) });
  });

  add('FullDuplexCall', true, true, async (call) => {
    call.sendHeaders(echoedInitial(call));
    for await (const bytes of call.messages()) {
      const req = decode<StreamingOutputCallRequest>(StreamingOutputCallRequestT, bytes);
      const status = echoStatus(req.responseStatus, call);
      if (status) {
        call.end(status);
        return;
      }
      if (!(await respond(call, req.responseParameters))) return;
    }
    if (call.cancelled) return;
    call.end({ code: Status.OK, trailers: echoedTrailing(call) });
  });

  add('HalfDuplexCall', true, true, async (call) => {
    const requests: StreamingOutputCallRequest[] = [];
    for await (const bytes of call.messages()) {
      requests.push(decode<StreamingOutputCallRequest>(StreamingOutputCallRequestT, bytes));
    }
    if (call.cancelled) return;
    call.sendHeaders(echoedInitial(call));
    for (const req of requests) {
      const status = echoStatus(req.responseStatus, call);
      if (status) {
        call.end(status);
        return;
      }
      if (!(await respond(call, req.responseParameters))) return;
    }
    call.end({ code: Status.OK, trailers: echoedTrailing(call) });
  });

  return methods;
}

/** Runs a call of the interop service; a handler's failure ends the call with INTERNAL. */
export function dispatchInterop(call: NativeCall<InteropMethod>): void {
  Promise.resolve()
    .then(() => call.method.run(call))
    .catch((err: unknown) =>
      call.end({
        code: Status.INTERNAL,
        message: err instanceof Error ? err.message : String(err),
      }),
    );
}
