// grpc/servers/grpc-js-wired.ts
import {
  ResponderBuilder,
  Server,
  ServerCredentials,
  ServerInterceptingCall,
  ServerListenerBuilder,
  status
} from "@grpc/grpc-js";
import { loadSync } from "@grpc/proto-loader";

// grpc/servers/same-work.ts
import { randomUUID } from "node:crypto";
import pino from "pino";
import { Counter, Histogram, Registry } from "prom-client";
var APP = { name: "bench-peer", version: "1.0.0", domain: "local" };
var logger = pino(
  { base: { app: APP.name, version: APP.version, domain: APP.domain, pid: process.pid } },
  pino.destination({
    dest: process.env["EVENTS_FILE"] ?? "/dev/null",
    minLength: 4096,
    sync: false
  })
);
var registry = new Registry();
var elapsed = new Histogram({
  name: "call_elapsed_seconds",
  help: "Time to handle a call, in seconds.",
  labelNames: ["method", "code"],
  registers: [registry]
});
var calls = new Counter({
  name: "calls_total",
  help: "Calls handled.",
  labelNames: ["method", "code"],
  registers: [registry]
});
function startCall(incomingId) {
  return {
    requestId: incomingId || randomUUID(),
    receivedIso: (/* @__PURE__ */ new Date()).toISOString(),
    startHr: process.hrtime.bigint()
  };
}
function responseHeaders(c) {
  return {
    "x-request-id": c.requestId,
    "x-svc-app-domain": APP.domain,
    "x-svc-app-name": APP.name,
    "x-svc-app-unix-time": (/* @__PURE__ */ new Date()).toISOString(),
    "x-svc-app-version": APP.version,
    "x-svc-received-time": c.receivedIso
  };
}
function endCall(c, call) {
  const ns = process.hrtime.bigint() - c.startHr;
  const seconds = Number(ns) / 1e9;
  elapsed.observe({ method: call.method, code: call.code }, seconds);
  calls.inc({ method: call.method, code: call.code });
  logger.info(
    {
      requestId: c.requestId,
      startTime: c.receivedIso,
      elapsedNano: Number(ns),
      operation: call.method,
      path: call.path,
      remoteAddr: call.remoteAddr,
      userAgent: call.userAgent,
      resCode: call.code
    },
    "call"
  );
}
function exitOnSigterm(close) {
  process.once("SIGTERM", () => {
    void Promise.resolve(close?.()).finally(() => {
      logger.flush();
      process.exit(0);
    });
  });
}

// grpc/servers/serve.ts
import path from "node:path";
import { fileURLToPath } from "node:url";
var here = path.dirname(fileURLToPath(import.meta.url));
var demoDir = path.resolve(here, "../../../apps/demo-grpc");
var protoFile = path.join(demoDir, "api/v1/greeter.proto");
var gwMappingFile = path.join(demoDir, "api/v1/gw_mapping.yaml");
function port() {
  const p = Number(process.env["PORT"]);
  if (!Number.isInteger(p) || p <= 0)
    throw new Error("PORT is not set: the bench starts each server with PORT=<free port>");
  return p;
}
var HELLO = { message: "hello!" };
var HELLO_JSON = JSON.stringify(HELLO);

// grpc/servers/grpc-js-wired.ts
var CODE_NAMES = Object.fromEntries(Object.entries(status).map(([k, v]) => [v, k]));
var sameWork = (method, call) => {
  let started;
  let userAgent = "";
  const responder = new ResponderBuilder().withStart(
    (next) => next(
      new ServerListenerBuilder().withOnReceiveMetadata((md, nextMd) => {
        const id = md.get("x-request-id")[0];
        userAgent = String(md.get("user-agent")[0] ?? "");
        started = startCall(typeof id === "string" ? id : void 0);
        nextMd(md);
      }).build()
    )
  ).withSendMetadata((md, next) => {
    if (started) for (const [k, v] of Object.entries(responseHeaders(started))) md.set(k, v);
    next(md);
  }).withSendStatus((st, next) => {
    if (started)
      endCall(started, {
        method: method.path,
        path: method.path,
        remoteAddr: call.getPeer(),
        userAgent,
        code: CODE_NAMES[st.code] ?? String(st.code)
      });
    next(st);
  }).build();
  return new ServerInterceptingCall(call, responder);
};
var greeter = loadSync(protoFile)["api.v1.Greeter"];
var server = new Server({ interceptors: [sameWork] });
server.addService(greeter, {
  Hello: (_call, callback) => callback(null, HELLO)
});
server.bindAsync(`127.0.0.1:${port()}`, ServerCredentials.createInsecure(), (err) => {
  if (err) throw err;
});
exitOnSigterm();
