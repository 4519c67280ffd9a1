// Imported first by balancing.test.ts: grpc-js asks a target's own DNS server
// (dns://<server>/name) only when GRPC_NODE_USE_ALTERNATIVE_RESOLVER=true as it loads. Test files
// share their worker (vitest.config.ts, isolate: false) and demo.test.ts may load grpc-js first:
// package.json's test script sets it for the whole run too (every other target here is an IP).
process.env.GRPC_NODE_USE_ALTERNATIVE_RESOLVER = 'true';
