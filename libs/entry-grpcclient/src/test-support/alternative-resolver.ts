// Imported first by the tests of dns://<server>/ targets: grpc-js reads this once, when it loads,
// and asks the target's DNS server (its c-ares resolver) only with it; else getaddrinfo answers.
// Test files share their worker process (vitest.config.ts, isolate: false), so grpc-js may have
// been loaded by an earlier file: the package's test script sets it for the whole run too (every
// other test of this package names its backends by IP address, which both resolvers take as is).
process.env.GRPC_NODE_USE_ALTERNATIVE_RESOLVER = 'true';
