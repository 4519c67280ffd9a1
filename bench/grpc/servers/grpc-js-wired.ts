/**
 * The hand-wired gRPC peer: bare @grpc/grpc-js plus one server interceptor doing svcboot's
 * per-call work with pino and prom-client (same-work.ts): the six response headers, one log line
 * and the metrics per call.
 */
import {
  ResponderBuilder,
  Server,
  ServerCredentials,
  ServerInterceptingCall,
  ServerListenerBuilder,
  type ServerInterceptor,
  type ServiceDefinition,
  status,
} from '@grpc/grpc-js';
import { loadSync } from '@grpc/proto-loader';
import { endCall, exitOnSigterm, responseHeaders, startCall, type CallStart } from './same-work.js';
import { HELLO, port, protoFile } from './serve.js';

const CODE_NAMES = Object.fromEntries(Object.entries(status).map(([k, v]) => [v, k])) as Record<
  number,
  string
>;

const sameWork: ServerInterceptor = (method, call) => {
  let started: CallStart | undefined;
  let userAgent = '';
  const responder = new ResponderBuilder()
    .withStart((next) =>
      next(
        new ServerListenerBuilder()
          .withOnReceiveMetadata((md, nextMd) => {
            const id = md.get('x-request-id')[0];
            userAgent = String(md.get('user-agent')[0] ?? '');
            started = startCall(typeof id === 'string' ? id : undefined);
            nextMd(md);
          })
          .build(),
      ),
    )
    .withSendMetadata((md, next) => {
      if (started) for (const [k, v] of Object.entries(responseHeaders(started))) md.set(k, v);
      next(md);
    })
    .withSendStatus((st, next) => {
      if (started)
        endCall(started, {
          method: method.path,
          path: method.path,
          remoteAddr: call.getPeer(),
          userAgent,
          code: CODE_NAMES[st.code] ?? String(st.code),
        });
      next(st);
    })
    .build();
  return new ServerInterceptingCall(call, responder);
};

const greeter = loadSync(protoFile)['api.v1.Greeter'] as ServiceDefinition;
const server = new Server({ interceptors: [sameWork] });
server.addService(greeter, {
  Hello: (_call: unknown, callback: (err: null, res: typeof HELLO) => void) =>
    callback(null, HELLO),
});
server.bindAsync(`127.0.0.1:${port()}`, ServerCredentials.createInsecure(), (err) => {
  if (err) throw err;
});
exitOnSigterm();
