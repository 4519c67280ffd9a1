/**
 * @svcboot/entry-grpc: the `grpc` entry kind with everything it serves, the package `svc add grpc`
 * installs. It depends on the server core, @svcboot/grpc-server (native gRPC, descriptors,
 * reflection, health, one port, the built-in routes), which depends on @svcboot/grpc-typed (typed
 * services and clients), and on the packages the core loads when boot.yaml needs them:
 * @svcboot/grpc-gateway (the REST gateway, the OpenAPI UIs) and @svcboot/grpc-browser (Connect,
 * gRPC-Web). It exports every name the core exports and the gateway's path templates: importing
 * it registers the `grpc` entry kind and the `validate` middleware.
 */
export * from '@svcboot/grpc-server';
// The path templates from their own module (no imports): the gateway's index, and what it loads,
// stay unloaded until boot.yaml needs the gateway.
export { compileTemplate, type PathTemplate } from '@svcboot/grpc-gateway/internal/template';
export type { HttpBinding } from '@svcboot/grpc-gateway';
