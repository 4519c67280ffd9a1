import { runApp } from '@svcboot/entry-core';
import { grpcEntry, type ServiceImpl } from '@svcboot/entry-grpc';
// Makes middleware.trace available (off in boot.yaml; README, "A trace of a gateway call").
import '@svcboot/middleware-trace';
import { Greeter } from './gen/v1/greeter_pb.js';

// api.v1.Greeter, typed from protoc-gen-es's code for api/v1/greeter.proto (src/gen, written by
// `npx svc pb gen`): TypeScript checks each method's request and response against the proto.
const greeter: ServiceImpl<typeof Greeter> = {
  async hello() {
    return { message: 'hello!' };
  },
};

// Boots ./boot.yaml (or --config / SVC_BOOT_CONFIG), registers Greeter, serves until SIGINT/SIGTERM.
await runApp((app) => {
  grpcEntry(app, 'greeter').addService(Greeter, greeter);
});
