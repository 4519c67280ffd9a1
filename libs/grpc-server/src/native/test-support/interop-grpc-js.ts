/**
 * The same grpc.testing.TestService (doc/interop-test-descriptions.md, "Server") on grpc-js's own
 * Server, so that the interop cases run against today's server too. grpc-js's server cannot do two
 * of the features: CompressedRequest (a handler cannot see whether a message came compressed) and
 * CompressedResponse (it never compresses); the cases that need them are skipped there.
 */
import {
  Metadata,
  Server,
  ServerCredentials,
  type ServerDuplexStream,
  type ServerReadableStream,
  type ServerUnaryCall,
  type ServerWritableStream,
  type ServiceDefinition,
  type sendUnaryData,
} from '@grpc/grpc-js';
import * as protoLoader from '@grpc/proto-loader';
import { TESTDATA } from './interop-service.js';

interface EchoStatus {
  code?: number;
  message?: string;
}
interface Params {
  size?: number;
  intervalUs?: number;
}
interface OutputRequest {
  responseParameters?: Params[];
  responseStatus?: EchoStatus | null;
}

const ECHO_INITIAL = 'x-grpc-test-echo-initial';
const ECHO_TRAILING = 'x-grpc-test-echo-trailing-bin';

function echoed(from: Metadata, key: string): Metadata {
  const md = new Metadata();
  for (const v of from.get(key)) md.add(key, v);
  return md;
}

const payload = (size: number) => ({ payload: { type: 0, body: Buffer.alloc(size) } });
const sleep = (us: number) =>
  us > 0 ? new Promise<void>((r) => setTimeout(r, Math.ceil(us / 1000))) : Promise.resolve();

/** The TestService's grpc-js definition (proto-loader, the vendored protos). */
export function interopDefinition(): ServiceDefinition {
  const def = protoLoader.loadSync('src/proto/grpc/testing/test.proto', {
    includeDirs: [TESTDATA],
    keepCase: false,
    longs: Number,
    defaults: false,
  });
  return def['grpc.testing.TestService'] as ServiceDefinition;
}

/** A grpc-js Server with the interop TestService, listening on 127.0.0.1; resolves its port. */
export async function startGrpcJsInterop(): Promise<{ port: number; close(): Promise<void> }> {
  const server = new Server();
  server.addService(interopDefinition(), interopImplementation());
  const port = await new Promise<number>((resolve, reject) =>
    server.bindAsync('127.0.0.1:0', ServerCredentials.createInsecure(), (err, p) =>
      err ? reject(err) : resolve(p),
    ),
  );
  return {
    port,
    close: async () => server.forceShutdown(),
  };
}

/** The TestService's handlers in grpc-js's style (for grpc-js's Server or the svcboot entry). */
export function interopImplementation() {
  async function respond(
    call: ServerWritableStream<unknown, unknown> | ServerDuplexStream<unknown, unknown>,
    params: Params[] | undefined,
  ): Promise<boolean> {
    for (const p of params ?? []) {
      await sleep(p.intervalUs ?? 0);
      if (call.cancelled) return false;
      if (!call.write(payload(p.size ?? 0))) await new Promise((r) => call.once('drain', r));
    }
    return !call.cancelled;
  }

  const statusError = (s: EchoStatus | null | undefined, md: Metadata) =>
    s && (s.code ?? 0) !== 0
      ? { code: s.code ?? 0, details: s.message ?? '', metadata: md }
      : undefined;

  return {
    EmptyCall: (call: ServerUnaryCall<unknown, unknown>, cb: sendUnaryData<unknown>) => {
      call.sendMetadata(echoed(call.metadata, ECHO_INITIAL));
      cb(null, {}, echoed(call.metadata, ECHO_TRAILING));
    },
    UnaryCall: (
      call: ServerUnaryCall<{ responseSize?: number; responseStatus?: EchoStatus }, unknown>,
      cb: sendUnaryData<unknown>,
    ) => {
      call.sendMetadata(echoed(call.metadata, ECHO_INITIAL));
      const trailing = echoed(call.metadata, ECHO_TRAILING);
      const err = statusError(call.request.responseStatus, trailing);
      if (err) cb(err);
      else cb(null, payload(call.request.responseSize ?? 0), trailing);
    },
    StreamingOutputCall: async (call: ServerWritableStream<OutputRequest, unknown>) => {
      call.sendMetadata(echoed(call.metadata, ECHO_INITIAL));
      const trailing = echoed(call.metadata, ECHO_TRAILING);
      if (!(await respond(call, call.request.responseParameters))) return;
      const err = statusError(call.request.responseStatus, trailing);
      if (err) call.emit('error', err);
      else call.end(trailing);
    },
    StreamingInputCall: (
      call: ServerReadableStream<{ payload?: { body?: Buffer } }, unknown>,
      cb: sendUnaryData<unknown>,
    ) => {
      let total = 0;
      call.on(
        'data',
        (m: { payload?: { body?: Buffer } }) => (total += m.payload?.body?.length ?? 0),
      );
      call.on('end', () => {
        call.sendMetadata(echoed(call.metadata, ECHO_INITIAL));
        cb(null, { aggregatedPayloadSize: total }, echoed(call.metadata, ECHO_TRAILING));
      });
    },
    FullDuplexCall: (call: ServerDuplexStream<OutputRequest, unknown>) => {
      call.sendMetadata(echoed(call.metadata, ECHO_INITIAL));
      const trailing = echoed(call.metadata, ECHO_TRAILING);
      let chain = Promise.resolve(true);
      let over = false;
      call.on('data', (req: OutputRequest) => {
        chain = chain.then(async (ok) => {
          if (!ok || over) return false;
          const err = statusError(req.responseStatus, trailing);
          if (err) {
            over = true;
            call.emit('error', err);
            return false;
          }
          return respond(call, req.responseParameters);
        });
      });
      call.on('end', () => {
        void chain.then((ok) => {
          if (ok && !over) call.end(trailing);
        });
      });
    },
  };
}
