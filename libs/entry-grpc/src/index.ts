/**
 * @svcboot/entry-grpc: the `grpc` entry kind with everything it serves, the package `svc add grpc`
 * installs. It depends on the server core, @svcboot/grpc-server (native gRPC, descriptors,
 * reflection, health, one port; for now also the REST gateway, the OpenAPI UIs, Connect and
 * gRPC-Web), which depends on @svcboot/grpc-typed (typed services and clients), and exports every
 * name they export: importing it registers the `grpc` entry kind and the `validate` middleware.
 */
export * from '@svcboot/grpc-server';
