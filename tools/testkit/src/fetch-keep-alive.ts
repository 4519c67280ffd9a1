/**
 * A vitest setup file (vitest.config.ts `setupFiles`): the tests' `fetch` closes a keep-alive
 * connection once it has been idle 50 ms, where Node's default client keeps it 4 s.
 *
 * Why: an entry's graceful shutdown closes an idle keep-alive connection only after it has been
 * idle DRAIN_IDLE_CLOSE_MS (1 s, entry-core http/idle-connections.ts), since a request the client
 * has just sent on it would otherwise be reset. A test that fetched from an app and then shut it
 * down therefore waited that second in full, once per app: about 60 s of the conformance suite
 * alone. A client that lets go of its idle connections is a client a server meets in production
 * too; what the server does is unchanged (its own tests hold connections open with sockets and
 * agents of their own, which this leaves alone).
 *
 * Node's fetch is undici's and takes its dispatcher from a global symbol: the replacement is an
 * Agent of that same undici (the constructor of the one Node made), so nothing else is loaded.
 * Node 20 (undici 6) keeps it under `undici.globalDispatcher.1`; Node 24 (undici 7) under `.2` and
 * `.1` both; Node 26 (undici 8) under `.2`, with `.1` holding a wrapper of it for code written
 * against the older interface.
 */
const V1 = Symbol.for('undici.globalDispatcher.1');
const V2 = Symbol.for('undici.globalDispatcher.2');

interface Dispatcher {
  close(): Promise<void>;
}
type AgentClass = new (options: {
  keepAliveTimeout: number;
  keepAliveMaxTimeout: number;
}) => Dispatcher;
type WrapperClass = new (dispatcher: Dispatcher) => Dispatcher;

const slot = globalThis as unknown as Record<symbol, Dispatcher | undefined>;
// Node creates its global dispatcher on the first fetch; a data: URL touches no network.
if (slot[V2] === undefined && slot[V1] === undefined) await (await fetch('data:,')).arrayBuffer();
const key = slot[V2] !== undefined ? V2 : V1;
const current = slot[key];
if (current !== undefined && !(current as { svcTestClient?: true }).svcTestClient) {
  const Agent = current.constructor as AgentClass;
  const agent = Object.assign(new Agent({ keepAliveTimeout: 50, keepAliveMaxTimeout: 50 }), {
    svcTestClient: true as const,
  });
  slot[key] = agent;
  // Node 24 holds the same Agent under both symbols; Node 26 a wrapper of it under `.1`.
  const older = key === V2 ? slot[V1] : undefined;
  if (older !== undefined)
    slot[V1] = older.constructor === Agent ? agent : new (older.constructor as WrapperClass)(agent);
  // Connections it still holds close; calls already made on it finish first.
  void current.close().catch(() => undefined);
}
