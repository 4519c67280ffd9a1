// grpc/servers/start-app.ts
import { loadSync } from "@grpc/proto-loader";
import { boot } from "@svcboot/entry-core";
import { grpcEntry } from "@svcboot/entry-grpc";

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

// grpc/servers/start-app.ts
var configText = `app:
  name: bench-start
  version: 1.0.0
  drainDelayMs: 0
logger:
  - name: quiet
    level: warn
event:
  - name: records
    encoding: console
    outputPaths: ["${process.env["EVENTS_FILE"] ?? "/dev/null"}"]
grpc:
  - name: greeter
    port: ${port()}
    loggerEntry: quiet
    eventEntry: records
    protos:
      files: [${protoFile}]
    prom: { enabled: true }
    middleware:
      logging: { enabled: true }
      prom: { enabled: true }
      meta: { enabled: true }
`;
var greeter = loadSync(protoFile)["api.v1.Greeter"];
var app = await boot({ argv: [], cwd: demoDir, configText });
grpcEntry(app, "greeter").addService(greeter, {
  Hello: (_call, callback) => callback(null, HELLO)
});
await app.bootstrap();
process.exit(await app.waitForShutdown());
