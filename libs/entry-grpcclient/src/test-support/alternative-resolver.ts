// Imported first by the tests of dns://<server>/ targets: grpc-js reads this once, when it loads,
// and asks the target's DNS server (its c-ares resolver) only with it; else getaddrinfo answers.
process.env.GRPC_NODE_USE_ALTERNATIVE_RESOLVER = 'true';
