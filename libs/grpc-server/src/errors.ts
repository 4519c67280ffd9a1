import { errorFactory, type ErrorCatalogue } from '@svcboot/entry-core/internal/errors';

/** entry-grpc's errors (codes documented in README.md, "Errors"). */
export const grpcErrors = {
  SVC_GRPC_LISTEN_FAILED: {
    when: 'bootstrap could not listen on `port` (in use, no permission)',
    fix: 'choose a free port (`port: 0` lets the OS pick)',
    message: (configPath: string, port: number, cause: string) =>
      `${configPath}: cannot listen on port ${port}: ${cause}; choose a free port (port: 0 lets the OS pick)`,
  },
  SVC_GRPC_NOT_BOOTSTRAPPED: {
    when: '`port` was read before the entry was bootstrapped',
    fix: 'read it after `app.bootstrap()` resolved',
    message: (configPath: string) => `${configPath}: port is known only after bootstrap`,
  },
  SVC_GRPC_TOO_LATE: {
    when: '`addService`, `use` or another setup method was called after bootstrap',
    fix: 'call it before `app.bootstrap()`',
    message: (configPath: string, what: string) =>
      `${configPath}: ${what}() must be called before bootstrap`,
  },
  SVC_GRPC_TYPED_MISSING_METHOD: {
    when: '`addService(service, implementation)` with a generated service: the implementation lacks a handler for one of its methods (or it is not a function)',
    fix: 'implement every method of the service (by its local name, e.g. `getBook`); answer `throw new RpcError(Code.UNIMPLEMENTED, ...)` from the ones not ready',
    message: (configPath: string, service: string, missing: string) =>
      `${configPath}: addService(${service}): no handler for ${missing}; implement every method of the service (throw new RpcError(Code.UNIMPLEMENTED, ...) from one not ready yet)`,
  },
  SVC_GRPC_VALIDATE: {
    when: '`middleware.validate.enabled` is true but @bufbuild/protovalidate cannot be loaded',
    fix: 'install it next to @svcboot/entry-grpc: `npm install @bufbuild/protovalidate`',
    message: (configPath: string, cause: string) => `${configPath}.middleware.validate: ${cause}`,
  },
  SVC_GRPC_PROTOCOL_NOT_INSTALLED: {
    when: '`grpcWeb.enabled` or `connect.enabled` is true but @svcboot/grpc-browser (the package of Connect and gRPC-Web) is not installed',
    fix: 'run `npm install @svcboot/grpc-browser`, or install @svcboot/entry-grpc, which brings every protocol',
    message: (configPath: string, key: string, pkg: string) =>
      `${configPath}.${key}: ${key} is provided by ${pkg}, which is not installed: run \`npm install ${pkg}\` (or install @svcboot/entry-grpc, which brings every protocol)`,
  },
  SVC_GRPC_GATEWAY_NOT_INSTALLED: {
    when: 'boot.yaml needs the REST gateway or the OpenAPI UIs (HTTP rules: `gwMappingFiles`, `(google.api.http)` annotations, `generateUnboundMethods`; `sw`, `docs`; gRPC-Web or Connect preflights with `middleware.cors`) but @svcboot/grpc-gateway is not installed',
    fix: 'run `npm install @svcboot/grpc-gateway`, or install @svcboot/entry-grpc, which brings every protocol; or remove what needs it',
    message: (configPath: string, neededBy: string, pkg: string) =>
      `${configPath}: ${neededBy} needs the REST gateway, which ${pkg} provides and is not installed: run \`npm install ${pkg}\` (or install @svcboot/entry-grpc, which brings every protocol)`,
  },
  SVC_GRPC_TLS_CERT_ENTRY: {
    when: '`tls.certEntry` names a cert entry that lacks its certificate or its key',
    fix: 'set both `certPemPath` and `keyPemPath` on that cert entry',
    message: (configPath: string, certEntry: string) =>
      `${configPath}.tls.certEntry: cert entry "${certEntry}" needs both certPemPath and keyPemPath`,
  },
  SVC_GRPC_TLS_INCOMPLETE: {
    when: 'only one of `tls.certFile` and `tls.keyFile` is set',
    fix: 'set both, or neither for plaintext',
    message: (configPath: string) => `${configPath}.tls: set both certFile and keyFile`,
  },
  SVC_GRPC_TLS_UNREADABLE: {
    when: '`tls.certFile` or `tls.keyFile` cannot be read',
    fix: 'check the paths (relative to the working directory) and their permissions',
    message: (configPath: string, cause: string) =>
      `${configPath}.tls: cannot read the certificate or key: ${cause}`,
  },
  SVC_GRPC_PROTOS: {
    when: 'a `protos.files` file cannot be read or parsed, or an import is not found under `protos.includeDirs`',
    fix: 'fix the file or path the message names (line and column are given for parse errors)',
    message: (where: string, cause: string) => `${where}: ${cause}`,
  },
  SVC_GRPC_DESCRIPTOR_SETS: {
    when: 'a `protos.descriptorSets` file cannot be read, is not a binary FileDescriptorSet, lacks an import, or does not resolve',
    fix: 'write it with `buf build -o <file>` or `protoc --include_imports --descriptor_set_out=<file>`',
    message: (configPath: string, cause: string) => `${configPath}.protos.descriptorSets: ${cause}`,
  },
  SVC_GRPC_MAPPING_FILE: {
    when: 'a `gwMappingFiles` file cannot be read, is not a `google.api.Service` yaml, or has a rule without selector or pattern',
    fix: 'fix the file the message names',
    message: (configPath: string, cause: string) => `${configPath}.gwMappingFiles: ${cause}`,
  },
  SVC_GRPC_NO_DESCRIPTOR: {
    when: 'an HTTP rule binds a method of a service whose descriptor is in no `.proto` file or descriptor set, so it cannot be served',
    fix: 'list its .proto file under `protos.files` or its descriptor set under `protos.descriptorSets`',
    message: (configPath: string, service: string) =>
      `${configPath}: no descriptor for ${service}; list its .proto file under protos.files or its descriptor set under protos.descriptorSets`,
  },
  SVC_GRPC_OPENAPI_FAILED: {
    when: 'the OpenAPI document cannot be built while `sw` or `docs` is enabled (otherwise it is only logged)',
    fix: 'read the cause after the colon (usually a rule or message the generator refuses)',
    message: (configPath: string, cause: string) =>
      `${configPath}.sw: cannot build the OpenAPI document: ${cause}`,
  },
} satisfies ErrorCatalogue;

/** Throws entry-grpc's catalogued errors. */
export const grpcError = errorFactory(grpcErrors);
