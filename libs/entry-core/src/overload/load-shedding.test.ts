import { Registry } from 'prom-client';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import type { CallAdapter } from '../call/adapter.js';
import { endCall, startCall } from '../call/driver.js';
import { CallChain, CallContext, type CallHeaders, type CallInfo } from '../middleware/call.js';
import type { CallRejection } from '../middleware/rejection.js';
import { TimeoutMiddleware } from '../middleware/timeout/middleware.js';
import { timeoutSchema } from '../middleware/timeout/schema.js';
import { LoadShedding, recheckAdmission } from './load-shedding.js';
import { loadSheddingSchema } from './schema.js';
import { SimulatedClock } from './test-support/simulated-clock.js';

const headers: CallHeaders = { get: () => undefined, set: () => undefined };

function infoOf(path: string, builtin = false): CallInfo {
  return {
    operation: `GET ${path}`,
    remoteAddr: '127.0.0.1:1',
    apiMethod: 'GET',
    apiPath: path,
    apiProtocol: 'HTTP/1.1',
    apiQuery: '',
    userAgent: '',
    ...(builtin ? { builtin: true } : {}),
  };
}

/**
 * The time the framework spends on a call besides its handler (the transport, the chain): a
 * cheap call is not free, and admission learns its service time from what calls cost.
 */
const CALL_COST_MS = 0.02;
/** What a refusal costs the process (the shed call's own path: BENCHMARKS.md, shed call's cost). */
const REFUSAL_COST_MS = 0.03;

/**
 * The time every test runs on: it moves only as the simulated handlers work and the simulated
 * clients wait, so that what admission decides does not depend on how crowded the machine
 * running the test is (a test that busy-waited on the real CPU failed beside busy processes).
 * Date.now() (the calls' arrival, their deadlines) reads it too. Turns of the loop are real.
 */
let clock = new SimulatedClock();

/** What happened to one call: its outcome, in the order the driver told the adapter. */
interface Outcome {
  path: string;
  how: 'ran' | 'refused' | 'pending';
  /** The turn of the test's own counter in which the handler ran (see `turn`). */
  ranInTurn?: number;
  /** How many handlers had run before this one. */
  ranAfter?: number;
  rejection?: CallRejection;
  /** When the call was sent, and when its handler began (the simulated clock's ms). */
  sentMs?: number;
  ranMs?: number;
  /** When an open loop's call was due (it waited from then, unread, until its turn sent it). */
  dueMs?: number;
  /** Its handler started after the read its headers came in (`reading`), not from the queue. */
  fromRead?: boolean;
  /** When its answer was sent (the simulated clock's ms): see `deferredWrites`. */
  answeredMs?: number;
}

/**
 * Whether answers are sent as HTTP/2 sends them (Node's http2 session writes what its streams
 * queued in the loop's check phase: a handler's answer goes out at the end of the first poll
 * phase, `onTurn`, that ends after the handler) rather than at once, as HTTP/1.1 writes them.
 */
let deferredWrites = false;
/** The calls whose answers wait for the end of the next poll phase (`deferredWrites`). */
let unsent: Outcome[] = [];

/** The check phase that follows a poll phase: the answers HTTP/2 queued go out. */
function sendAnswers(): void {
  for (const o of unsent) o.answeredMs = clock.now();
  unsent = [];
}

let turn = 0;
let handlersRun = 0;
let turnTimer: NodeJS.Immediate | undefined;
/** What runs at each turn of the loop besides counting it (the open loop's arrivals). */
let onTurn: (() => void) | undefined;
/**
 * Counts the loop's turns (one immediate per turn) while a test runs, and fires the simulated
 * clock's timers due by then. The next one is armed last, so that what this one started (an
 * arrival's admission arms its own tick) runs first in the next turn, as after a real poll phase.
 */
function countTurns(): void {
  turnTimer = setImmediate(() => {
    turn++;
    clock.fireDue();
    onTurn?.();
    sendAnswers();
    countTurns();
  });
}

/** One turn of the loop. */
const nextTurn = (): Promise<void> => new Promise((r) => setImmediate(r));

/** A transport in miniature: the handler holds the CPU for `workMs` (simulated), then the call ends. */
/**
 * While a read of several HTTP/2 streams is being parsed (`openLoop`'s `h2`): the handlers of the
 * calls admitted at their headers, started once the read is parsed, one after the other (as their
 * request messages complete), each re-checked first as the gRPC invoker does.
 */
let reading: Array<() => void> | undefined;

function start(
  chain: CallChain,
  path: string,
  workMs: number,
  opts: { builtin?: boolean; answered?: boolean; deadline?: number; async?: boolean } = {},
): Outcome {
  const info = infoOf(path, opts.builtin);
  if (opts.answered === true) info.answered = true;
  const call = new CallContext(info, headers);
  if (opts.deadline !== undefined) call.deadline = opts.deadline;
  const outcome: Outcome = { path, how: 'pending', sentMs: clock.now() };
  const adapter: CallAdapter = {
    proceed(c) {
      const run = (): void => {
        outcome.how = 'ran';
        outcome.ranInTurn = turn;
        outcome.ranAfter = handlersRun++;
        outcome.ranMs = clock.now();
        clock.work(workMs + CALL_COST_MS);
        endCall(c, 'OK');
        if (deferredWrites) unsent.push(outcome);
        else outcome.answeredMs = clock.now();
      };
      if (reading !== undefined) {
        reading.push(() => {
          outcome.fromRead = true;
          const shed = recheckAdmission(c);
          if (shed === undefined) run();
          else adapter.refuse(c, shed);
        });
        return;
      }
      // An async handler (a body read, a cache lookup first) does its work in a later turn.
      if (opts.async === true) setImmediate(run);
      else run();
    },
    refuse(c, r) {
      outcome.how = 'refused';
      outcome.rejection = r;
      endCall(c, r.status);
    },
  };
  void startCall(chain, call, adapter);
  return outcome;
}

function shedding(
  options: Record<string, unknown> = {},
  timeoutMs?: number,
): { chain: CallChain; ls: LoadShedding } {
  const timeout =
    timeoutMs === undefined
      ? undefined
      : new TimeoutMiddleware(timeoutSchema.parse({ enabled: true, timeoutMs }));
  const ls = new LoadShedding(
    loadSheddingSchema.parse(options),
    'api',
    new Registry(),
    timeout,
    clock,
  );
  const chain = new CallChain(timeout ? [ls, timeout] : [ls]);
  return { chain, ls };
}

const made: LoadShedding[] = [];
beforeEach(() => {
  clock = new SimulatedClock(10_000, Date.now());
  vi.spyOn(Date, 'now').mockImplementation(() => clock.dateMs());
  turn = 0;
  handlersRun = 0;
  deferredWrites = false;
  unsent = [];
  countTurns();
});
afterEach(async () => {
  if (turnTimer) clearImmediate(turnTimer);
  turnTimer = undefined;
  onTurn = undefined;
  vi.restoreAllMocks();
  const lc = { signal: AbortSignal.timeout(1000), timeoutMs: 1000 };
  for (const ls of made.splice(0)) await ls.close(lc);
});

/** The most turns a test waits for its calls to be answered (no real time passes in them). */
const MAX_TURNS = 20_000;

async function settled(outcomes: readonly Outcome[]): Promise<void> {
  for (let i = 0; i < MAX_TURNS; i++) {
    if (outcomes.every((o) => o.how !== 'pending')) return;
    await nextTurn();
  }
  const pending = outcomes.filter((o) => o.how === 'pending').length;
  throw new Error(
    `${pending} of ${outcomes.length} calls still unanswered after ${MAX_TURNS} turns`,
  );
}

/** The simulated clients wait `ms` with nothing else to run (the loop idle), then a turn passes. */
async function sleep(ms: number): Promise<void> {
  clock.idle(ms);
  await nextTurn();
}

describe('LoadShedding: admission within one turn of the loop', () => {
  it('a burst of 200 calls of 5 ms arriving in one turn: some run, the rest are shed at once with pushback', async () => {
    const { chain, ls } = shedding({ maxEventLoopDelayMs: 200 });
    made.push(ls);
    const outcomes = Array.from({ length: 200 }, () => start(chain, '/v1/render', 5));
    // Decided in this turn: every call either ran here, was refused here, or waits its turn (a
    // queue of 64 at most once its expected wait is past maxEventLoopDelayMs).
    const refusedAtOnce = outcomes.filter((o) => o.how === 'refused').length;
    expect(refusedAtOnce).toBeGreaterThan(100);
    await settled(outcomes);
    const ran = outcomes.filter((o) => o.how === 'ran');
    const refused = outcomes.filter((o) => o.how === 'refused');
    expect(ran.length).toBeGreaterThan(0);
    expect(ran.length).toBeLessThan(80);
    for (const o of refused) {
      expect(o.rejection?.status).toBe('ResourceExhausted');
      expect(o.rejection?.httpStatus).toBe(503);
      expect(o.rejection?.headers).toEqual({
        'Retry-After': '1',
        'grpc-retry-pushback-ms': '1000',
      });
    }
    // The queued ones ran one per turn, after the burst's own turn.
    const turns = ran.map((o) => o.ranInTurn!);
    expect(new Set(turns.slice(1)).size).toBe(turns.length - 1);
  });

  it('probes (builtin) in the middle of a burst are neither shed nor queued: they run in the turn they arrive in', async () => {
    const { chain, ls } = shedding();
    made.push(ls);
    const first = turn;
    const outcomes: Outcome[] = [];
    for (let i = 0; i < 60; i++) {
      outcomes.push(start(chain, '/v1/render', 5));
      if (i % 10 === 5) outcomes.push(start(chain, '/livez', 0, { builtin: true }));
    }
    const probes = outcomes.filter((o) => o.path === '/livez');
    expect(probes.map((o) => [o.how, o.ranInTurn])).toEqual(probes.map(() => ['ran', first]));
    // Not behind the calls that arrived before them: those wait for later turns, or were shed.
    const before = outcomes.find((o) => o.path === '/v1/render')!.ranAfter!;
    const last = probes[probes.length - 1]!;
    expect(last.ranAfter! - before).toBeLessThan(probes.length + 3);
    await settled(outcomes);
  });

  it('calls the transport already answered (an unknown gRPC method) are neither shed nor queued, and do not count as offered load: in a burst they run in the turn they arrive in, and the calls after them are admitted as without them', async () => {
    // A closed loop of callers of an unknown method (answered Unimplemented before the chain
    // records the call) had each call queued or shed (queue_time) after its caller had its
    // answer and had sent the next: ~25 % of them counted as shed, and the queue held them ahead
    // of real calls.
    const { chain, ls } = shedding();
    made.push(ls);
    const first = turn;
    const answered = Array.from({ length: 500 }, () =>
      start(chain, '/api.v1.Nope/Missing', 0.1, { answered: true }),
    );
    expect(answered.map((o) => [o.how, o.ranInTurn])).toEqual(answered.map(() => ['ran', first]));
    const real = start(chain, '/v1/render', 5);
    expect(real.how).toBe('ran');
    await settled([...answered, real]);
  });

  it('critical calls are shed last: in a burst they wait in their own queue and run, while plain calls are shed', async () => {
    const { chain, ls } = shedding({ critical: ['/v1/pay'], maxEventLoopDelayMs: 100 });
    made.push(ls);
    const outcomes: Outcome[] = [];
    for (let i = 0; i < 200; i++)
      outcomes.push(start(chain, i % 4 === 3 ? '/v1/pay' : '/v1/render', 2));
    await settled(outcomes);
    const count = (path: string, how: string): number =>
      outcomes.filter((o) => o.path === path && o.how === how).length;
    expect(count('/v1/render', 'refused')).toBeGreaterThan(0);
    // Critical calls are refused only beyond twice the wait plain ones get.
    expect(count('/v1/pay', 'ran') / 50).toBeGreaterThan(count('/v1/render', 'ran') / 150);
  });

  it('spread over turns (half of what it can serve), nothing is shed', async () => {
    const { chain, ls } = shedding();
    made.push(ls);
    const outcomes: Outcome[] = [];
    for (let i = 0; i < 40; i++) {
      outcomes.push(start(chain, '/v1/render', 5));
      // 5 ms of work, then 10 ms without any.
      await sleep(10);
    }
    await settled(outcomes);
    expect(outcomes.filter((o) => o.how !== 'ran')).toEqual([]);
  });

  it('cheap calls one slow turn queued leave the queue together, not one per turn', async () => {
    const { chain, ls } = shedding();
    made.push(ls);
    // Cheap calls served at once: the service time is learned.
    const warm = Array.from({ length: 8 }, () => start(chain, '/v1/cheap', 0));
    await settled(warm);
    await nextTurn();
    // One slow call (a pause, a collection, an odd render), then 32 cheap calls in the same turn.
    const slow = start(chain, '/v1/render', 15);
    const cheap = Array.from({ length: 32 }, () => start(chain, '/v1/cheap', 0));
    const queuedAt = turn;
    expect(slow.how).toBe('ran');
    expect(cheap.filter((o) => o.how === 'pending').length).toBeGreaterThan(0);
    await settled(cheap);
    expect(cheap.filter((o) => o.how !== 'ran')).toEqual([]);
    // One per turn they would have taken 32 turns (as many as the slow call's weight in the mean
    // service time allows per round: more each round, as cheap calls end).
    const lastTurn = Math.max(...cheap.map((o) => o.ranInTurn!));
    expect(lastTurn - queuedAt).toBeLessThan(16);
  });
});

describe('LoadShedding: a burst spread over turns', () => {
  /**
   * Sends `count` async calls of `workMs` at `ratePerMs` calls a ms, an open loop (each sent on
   * schedule, whether or not the earlier ones were answered: a timer sends what is due); their
   * outcomes once all are answered.
   */
  async function openLoop(
    chain: CallChain,
    count: number,
    ratePerMs: number,
    workMs: number,
    opts: {
      deadline?: () => number;
      sync?: boolean;
      batch?: number;
      h2?: boolean;
      h2Writes?: boolean;
    } = {},
  ): Promise<Outcome[]> {
    // `h2Writes`: answers sent as HTTP/2 sends them (`deferredWrites`), the calls read one at a
    // time (each handler starting at its admission); `h2` implies it.
    deferredWrites = opts.h2 === true || opts.h2Writes === true;
    const outcomes: Outcome[] = [];
    const started = clock.now();
    // `batch` calls at once (a client's batch on one connection), the batches at the rate's pace.
    const batch = opts.batch ?? 1;
    /** When call `i` is due. */
    const dueAt = (i: number): number => started + (Math.floor(i / batch) * batch) / ratePerMs;
    await new Promise<void>((resolve) => {
      // At each turn (as a timer would, after the turn's work), the calls due by now are sent;
      // a loop with nothing left to run waits idle for the next one.
      onTurn = () => {
        if (outcomes.every((o) => o.how !== 'pending') && outcomes.length < count) {
          const next = dueAt(outcomes.length);
          // (A loop with writes queued does not wait for I/O before it sends them.)
          sendAnswers();
          if (next > clock.now()) clock.idle(next - clock.now());
        }
        // The calls due when the turn began, as a poll phase reads what its sockets held then
        // (a call due while an earlier one's handler holds the CPU is read in the next turn).
        const turnBegan = clock.now();
        // `h2`: the turn's calls are one read of one HTTP/2 connection: all admitted at their
        // headers, then their handlers start one after the other (see `reading`).
        if (opts.h2 === true) reading = [];
        while (outcomes.length < count && dueAt(outcomes.length) <= turnBegan) {
          const dueMs = dueAt(outcomes.length);
          const o = start(chain, '/v1/render', workMs, {
            async: opts.sync !== true,
            ...(opts.deadline ? { deadline: opts.deadline() } : {}),
          });
          o.dueMs = dueMs;
          outcomes.push(o);
        }
        const read = reading;
        reading = undefined;
        for (const startHandler of read ?? []) startHandler();
        if (outcomes.length >= count) {
          onTurn = undefined;
          resolve();
        }
      };
    });
    await settled(outcomes);
    return outcomes;
  }

  it('calls that hold the CPU after an await, arriving at 3x what it serves over many turns: shed (queue_time)', async () => {
    const { chain, ls } = shedding({ maxEventLoopDelayMs: 200 });
    made.push(ls);
    // The service time and the pace calls end at, learned one call at a time.
    await openLoop(chain, 5, 0.02, 5);
    // 5 ms of work every 1.67 ms, for 300 calls (0.5 s of arrivals, 1.5 s of work).
    const outcomes = await openLoop(chain, 300, 0.6, 5);
    const refused = outcomes.filter((o) => o.how === 'refused');
    expect(refused.length).toBeGreaterThan(0);
    expect(outcomes.filter((o) => o.how === 'ran').length).toBeGreaterThan(0);
    for (const o of refused) expect(o.rejection?.status).toBe('ResourceExhausted');
  });

  it('a call whose deadline falls before the backlog ends is refused at once (deadline)', async () => {
    const { chain, ls } = shedding({ maxEventLoopDelayMs: 5000 });
    made.push(ls);
    await openLoop(chain, 5, 0.02, 5);
    const outcomes = await openLoop(chain, 200, 0.6, 5, { deadline: () => Date.now() + 100 });
    const byDeadline = outcomes.filter(
      (o) => o.how === 'refused' && o.rejection?.message.includes('deadline'),
    );
    expect(byDeadline.length).toBeGreaterThan(0);
  });

  it('calls that hold the CPU for 10 ms, offered at 3x what it serves: the admitted ones wait about one service time, and it keeps serving at capacity', async () => {
    const { chain, ls } = shedding();
    made.push(ls);
    // The unloaded service time, learned one call at a time.
    await openLoop(chain, 5, 0.01, 10, { sync: true });
    // One call every 3.3 ms for 2 s: 600 calls, 6 s of work.
    const outcomes = await openLoop(chain, 600, 0.3, 10, { sync: true });
    const ran = outcomes.filter((o) => o.how === 'ran');
    const refused = outcomes.filter((o) => o.how === 'refused');
    expect(refused.length).toBeGreaterThan(300);
    // What waited did so for about one call's service time (not up to 16 of them, as the queue
    // allows while the offered load is not seen past capacity: here until the calls waiting grew
    // in CPU work by EXCESS_MIN_GROWTH_CPU_MS, ~80 ms; the calls sent from 300 ms on are measured).
    const from = Math.min(...outcomes.map((o) => o.sentMs!)) + 300;
    const waits = ran
      .filter((o) => o.sentMs! >= from)
      .map((o) => o.ranMs! - o.sentMs!)
      .sort((a, b) => a - b);
    expect(waits.length).toBeGreaterThan(100);
    expect(waits[Math.floor(waits.length * 0.95)]).toBeLessThanOrEqual(20);
    expect(waits[waits.length - 1]).toBeLessThanOrEqual(100);
    // And the process kept busy: the calls it ran fill at least 90 % of the time they took.
    const span =
      Math.max(...ran.map((o) => o.ranMs!)) + 10 - Math.min(...ran.map((o) => o.sentMs!));
    expect((ran.length * 10) / span).toBeGreaterThan(0.9);
  });

  it('calls that hold the CPU for 10 ms, offered at 3x: once past capacity is seen, an admitted call waits at most about one service time from when it was due (its socket included), and the process stays busy', async () => {
    const { chain, ls } = shedding();
    made.push(ls);
    await openLoop(chain, 5, 0.01, 10, { sync: true });
    // One call every 3.3 ms for 3 s: 900 calls, 9 s of work.
    const outcomes = await openLoop(chain, 900, 0.3, 10, { sync: true });
    const ran = outcomes.filter((o) => o.how === 'ran');
    // Past capacity is seen within ~100 ms (EXCESS_MIN_GROWTH_CPU_MS): the calls due from 500 ms on.
    const from = Math.min(...outcomes.map((o) => o.dueMs!)) + 500;
    const late = ran.filter((o) => o.dueMs! >= from);
    const waits = late.map((o) => o.ranMs! - o.dueMs!).sort((a, b) => a - b);
    expect(waits.length).toBeGreaterThan(150);
    // The wait before its handler began, the socket's included: at most one service time (an
    // admitted call's latency within two unloaded service times, #42's goal at 3x). And the
    // call that runs is the newest of those its turn read (a later one takes the place of the
    // one queued before it in the same turn): half wait under 3 ms, p99 under 5 (p50 8.4 and p99
    // 10.0 ms when the turn's first kept its place and the later ones were shed).
    expect(waits[Math.ceil(waits.length * 0.99) - 1]).toBeLessThanOrEqual(5);
    expect(waits[Math.floor(waits.length / 2)]).toBeLessThanOrEqual(3);
    // And the process kept busy with them: the calls it ran fill >= 90 % of their span.
    const span =
      Math.max(...late.map((o) => o.ranMs!)) + 10 - Math.min(...late.map((o) => o.ranMs!));
    expect((late.length * 10) / span).toBeGreaterThanOrEqual(0.9);
  });

  it('calls that hold the CPU for 10 ms, offered at 3x: past capacity is seen within a few queued calls (their CPU work), not after 32 of them', async () => {
    const { chain, ls } = shedding();
    made.push(ls);
    // The CPU time per call, learned at a third of what it serves (100 calls over 1 s).
    await openLoop(chain, 100, 0.03, 10, { sync: true });
    const outcomes = await openLoop(chain, 300, 0.3, 10, { sync: true });
    expect(outcomes.filter((o) => o.how === 'refused').length).toBeGreaterThan(100);
    // The onset: the calls admitted that waited over two service times from when they were due
    // (their socket included) before their handler began: none (a turn's first call that follows
    // a busy call waits for the drain's round, so the turn's other calls are seen at once; the
    // queue lets the newest out first from the onset on, before a window has ended past capacity,
    // and sheds those that waited too long once the overload is declared). 2, up to 27 ms, when
    // that first call ran at once; 3 up to 33 ms when the newest also went first only from the
    // first window past capacity; 7 up to 60 ms when the oldest went first; 16 when the calls
    // waiting had to grow by 32 before.
    const late = outcomes.filter((o) => o.how === 'ran' && o.ranMs! - o.dueMs! > 20);
    expect(late.map((o) => o.ranMs! - o.dueMs!)).toEqual([]);
  });

  it("a turn's first call read right after a busy call ended waits for the drain's round (the turn's other calls are read first); after the loop waited for I/O it runs at once", async () => {
    const { chain, ls } = shedding();
    made.push(ls);
    // The CPU time per call (10 ms) is learned.
    await openLoop(chain, 100, 0.03, 10, { sync: true });
    await sleep(50);
    const a = start(chain, '/v1/render', 10);
    expect(a.how).toBe('ran');
    // The next turn, the loop not idle since `a` ended: its first call waits, as does the next.
    await nextTurn();
    const b = start(chain, '/v1/render', 10);
    const c = start(chain, '/v1/render', 10);
    expect([b.how, c.how]).toEqual(['pending', 'pending']);
    await settled([b, c]);
    expect([b.how, c.how]).toEqual(['ran', 'ran']);
    // After the loop waited for I/O, a turn's first call runs at its admission.
    await sleep(50);
    const d = start(chain, '/v1/render', 10);
    expect(d.how).toBe('ran');
  });

  it('connections accepted while calls wait, one a turn, hold the rounds of the drain for those turns (each request is read first), for ACCEPT_HOLD_MAX_MS (10 ms) in a row at most', async () => {
    const { chain, ls } = shedding();
    made.push(ls);
    await openLoop(chain, 100, 0.03, 10, { sync: true });
    await sleep(50);
    /**
     * The turns from a queue of two until the first of them ran, with `accepts` new connections
     * first, one a turn (as node:http accepts them), each turn's accept, read and admission
     * taking `turnMs`.
     */
    const firstRelease = async (accepts: number, turnMs = 0): Promise<number> => {
      await sleep(50);
      start(chain, '/v1/render', 10);
      await nextTurn();
      const queued = [start(chain, '/v1/render', 10), start(chain, '/v1/render', 10)];
      const from = turn;
      for (let i = 0; i < accepts && queued.every((o) => o.how === 'pending'); i++) {
        ls.connectionAccepted();
        clock.work(turnMs);
        if (i < accepts - 1) await nextTurn();
      }
      while (queued.every((o) => o.how === 'pending')) await nextTurn();
      const ranIn = Math.min(...queued.filter((o) => o.how === 'ran').map((o) => o.ranInTurn!));
      await settled(queued);
      return ranIn - from;
    };
    const none = await firstRelease(0);
    expect(await firstRelease(1)).toBe(none + 1);
    // A connection accepted at each turn: each of those turns' rounds held.
    expect(await firstRelease(3)).toBe(none + 3);
    // Turns of 0.5 ms that each accept one: held for 10 ms (20 turns), then a round runs while
    // connections are still being accepted.
    expect(await firstRelease(40, 0.5)).toBe(none + 20);
  });

  it('the same calls at 3x arriving in batches of 9 every 30 ms: the wait allowed grows while the process idles between batches, so that it keeps serving', async () => {
    const { chain, ls } = shedding();
    made.push(ls);
    await openLoop(chain, 5, 0.01, 10, { sync: true });
    const outcomes = await openLoop(chain, 900, 0.3, 10, { sync: true, batch: 9 });
    const ran = outcomes.filter((o) => o.how === 'ran');
    const from = Math.min(...outcomes.map((o) => o.dueMs!)) + 500;
    const late = ran.filter((o) => o.dueMs! >= from);
    // With the wait held at half a service time one call of each batch would run: a third of
    // the time busy.
    const span =
      Math.max(...late.map((o) => o.ranMs!)) + 10 - Math.min(...late.map((o) => o.ranMs!));
    expect((late.length * 10) / span).toBeGreaterThanOrEqual(0.6);
    expect(outcomes.filter((o) => o.how === 'refused').length).toBeGreaterThan(300);
  });

  it('the same calls at 3x arriving as HTTP/2 reads of several calls (admitted at their headers, each handler starting once its message is read, after the others of the read): re-checked before the handler, some are refused there, half start within one service time of their admission, and the process stays busy', async () => {
    const { chain, ls } = shedding();
    made.push(ls);
    await openLoop(chain, 5, 0.01, 10, { sync: true });
    const outcomes = await openLoop(chain, 900, 0.3, 10, { sync: true, batch: 6, h2: true });
    const ran = outcomes.filter((o) => o.how === 'ran');
    const from = Math.min(...outcomes.map((o) => o.dueMs!)) + 500;
    const late = ran.filter((o) => o.dueMs! >= from);
    // Calls refused before their handler ran: at their admission (the read's work already
    // admitted, see the next test) or at the re-check.
    expect(outcomes.filter((o) => o.how === 'refused').length).toBeGreaterThan(300);
    // From its admission (its headers read) to its handler's start: half of the calls started
    // within one service time (without the re-check: two, behind the read's other handlers).
    const waits = late.map((o) => o.ranMs! - o.sentMs!).sort((a, b) => a - b);
    expect(waits.length).toBeGreaterThan(100);
    expect(waits[Math.floor(waits.length / 2)]).toBeLessThanOrEqual(10.5);
    // And it kept serving: the calls it ran fill most of their span.
    const span =
      Math.max(...late.map((o) => o.ranMs!)) + 10 - Math.min(...late.map((o) => o.ranMs!));
    expect((late.length * 10) / span).toBeGreaterThanOrEqual(0.6);
    for (const o of outcomes.filter((x) => x.how === 'refused'))
      expect(o.rejection?.status).toBe('ResourceExhausted');
  });

  it('HTTP/2 reads of 3 calls at 3x, the CPU per call known, after a pause: a read admits the calls the work of its handlers leaves room for, so that from the first read on the answers come within two service times of when the calls were due', async () => {
    const { chain, ls } = shedding();
    made.push(ls);
    // The CPU time per call, learned at a third of what it serves; then the loop idles.
    await openLoop(chain, 100, 0.03, 10, { sync: true });
    await sleep(1000);
    const outcomes = await openLoop(chain, 600, 0.3, 10, { sync: true, batch: 3, h2: true });
    const ran = outcomes.filter((o) => o.how === 'ran');
    expect(outcomes.filter((o) => o.how === 'refused').length).toBeGreaterThan(300);
    // Over the whole step, its onset included: the answer (as HTTP/2 sends it) from when the
    // call was due. Admitted by the turn's lateness alone (nothing ran yet as the read's headers
    // are read), every call of a read ran, and the reads grew with the turns: 149 of 400 calls
    // answered over two service times late, up to 1,083 ms. Now one call of the onset's first
    // reads, 30 ms.
    const late = ran.filter((o) => o.answeredMs! - o.dueMs! > 20.5);
    expect(late.length).toBeLessThanOrEqual(2);
    for (const o of late) expect(o.answeredMs! - o.dueMs!).toBeLessThanOrEqual(35);
    // And it kept serving: the calls it ran fill most of their span.
    const span = Math.max(...ran.map((o) => o.ranMs!)) + 10 - Math.min(...ran.map((o) => o.ranMs!));
    expect((ran.length * 10) / span).toBeGreaterThanOrEqual(0.9);
  });

  it('an HTTP/2 answer of a call let out of the queue (sent in the next check phase) is not held behind a call the next poll phase would run at its admission: that call waits in the queue too', async () => {
    const { chain, ls } = shedding();
    made.push(ls);
    // The service time, learned one call at a time.
    await openLoop(chain, 5, 0.01, 10, { sync: true });
    deferredWrites = true;
    const calls: Outcome[] = [];
    await new Promise<void>((resolve) => {
      let poll = 0;
      onTurn = () => {
        // Two calls in one poll phase: the first runs, the second waits (the turn ran 10 ms)
        // and runs from the queue in the check phase; its answer goes out in the next one.
        if (poll === 0) calls.push(start(chain, '/v1/render', 10), start(chain, '/v1/render', 10));
        else {
          // The next poll phase reads a third call.
          calls.push(start(chain, '/v1/render', 10));
          onTurn = undefined;
          resolve();
        }
        poll++;
      };
    });
    await settled(calls);
    const [, second, third] = calls;
    expect(calls.map((o) => o.how)).toEqual(['ran', 'ran', 'ran']);
    // The second call's answer went out at the end of the poll phase that read the third: run
    // there at its admission, the third held it 10 ms more (20 ms after its handler began).
    expect(second!.answeredMs! - second!.ranMs!).toBeLessThanOrEqual(10.5);
    expect(third!.ranMs!).toBeGreaterThanOrEqual(second!.answeredMs!);
  });

  it('the same reads of several calls at half what it serves: nothing is shed, at admission or at the re-check', async () => {
    const { chain, ls } = shedding();
    made.push(ls);
    await openLoop(chain, 5, 0.01, 10, { sync: true });
    // 6 calls of 10 ms every 120 ms.
    const outcomes = await openLoop(chain, 300, 0.05, 10, { sync: true, batch: 6, h2: true });
    expect(outcomes.filter((o) => o.how === 'refused')).toEqual([]);
  });

  it('a closed loop of 16 callers of 10 ms calls (each sends its next call once answered): nothing is shed', async () => {
    const { chain, ls } = shedding();
    made.push(ls);
    const outcomes = await closedLoop(chain, { callers: 16, total: 16 * 25, cpuMs: () => 10 });
    expect(outcomes.filter((o) => o.how !== 'ran').map((o) => o.rejection?.source?.reason)).toEqual(
      [],
    );
  });

  /** A seeded generator of numbers in [0, 1): the same run every time. */
  function seeded(seed: number): () => number {
    let state = seed;
    return () => {
      state = (state * 1_103_515_245 + 12_345) % 2_147_483_648;
      return state / 2_147_483_648;
    };
  }

  /**
   * A closed loop of `callers` whose calls wait on I/O (a database: the loop idle meanwhile),
   * each sending its next call once answered, `clientDelayMs()` later (0: in the next turn): the
   * handler holds the CPU for `cpuMs`, then waits 5 to 95 ms for its answer. Runs `each` calls a
   * caller; returns their outcomes.
   */
  async function ioCallers(
    chain: CallChain,
    opts: {
      callers: number;
      each: number;
      /** The CPU time (ms) of the nth call's handler. */
      cpuMs: (n: number) => number;
      clientDelayMs?: () => number;
      /** The longest I/O wait (ms; 95 unless set), the shortest being 2. */
      ioMaxMs?: number;
      /** When each caller sends its first call (ms after the start; 0 unless set). */
      joinMs?: (i: number) => number;
      seed?: number;
    },
  ): Promise<Outcome[]> {
    const { callers, each } = opts;
    const random = seeded(opts.seed ?? 42);
    const outcomes: Outcome[] = [];
    /** Calls waiting on their I/O (when it answers, and how the call ends then), and callers waiting to send. */
    const waiting: Array<{ dueMs: number; end: () => void }> = [];
    /** When caller i sends its next call (Infinity while its last one is unanswered). */
    const sendAt = Array.from({ length: callers }, (_, i) => clock.now() + (opts.joinMs?.(i) ?? 0));
    const sent = Array.from({ length: callers }, () => 0);
    /** Calls admitted or refused, and how many were at the last turn. */
    let handled = 0;
    let lastHandled = -1;
    const answered = (i: number): void => {
      sendAt[i] = clock.now() + (opts.clientDelayMs?.() ?? 0);
    };
    const send = (i: number): void => {
      sent[i]!++;
      sendAt[i] = Infinity;
      const call = new CallContext(infoOf('/v1/user'), headers);
      const outcome: Outcome = { path: '/v1/user', how: 'pending', sentMs: clock.now() };
      const n = outcomes.push(outcome) - 1;
      void startCall(chain, call, {
        proceed(c) {
          outcome.how = 'ran';
          handled++;
          clock.work(CALL_COST_MS + opts.cpuMs(n));
          waiting.push({
            dueMs: clock.now() + 2 + random() * ((opts.ioMaxMs ?? 95) - 2),
            end: () => {
              endCall(c, 'OK');
              answered(i);
            },
          });
        },
        refuse(c, r) {
          outcome.how = 'refused';
          handled++;
          outcome.rejection = r;
          endCall(c, r.status);
          answered(i);
        },
      });
    };
    await new Promise<void>((resolve) => {
      onTurn = () => {
        // The loop waits idle for the next I/O answer or call when it has nothing else to run:
        // no call waits in the admission queue, or none left it since the last turn (they wait
        // for a running call to end).
        const queued = outcomes.filter((o) => o.how === 'pending').length;
        const next =
          queued > 0 && handled !== lastHandled
            ? clock.now()
            : Math.min(...waiting.map((w) => w.dueMs), ...sendAt.filter((_, i) => sent[i]! < each));
        lastHandled = handled;
        if (next > clock.now() && next !== Infinity) clock.idle(next - clock.now());
        const due = waiting.filter((w) => w.dueMs <= clock.now());
        waiting.splice(0, waiting.length, ...waiting.filter((w) => w.dueMs > clock.now()));
        for (const w of due) w.end();
        const now = clock.now();
        for (let i = 0; i < callers; i++) if (sent[i]! < each && sendAt[i]! <= now) send(i);
        if (
          outcomes.length === callers * each &&
          waiting.length === 0 &&
          sendAt.every((t) => t !== Infinity)
        ) {
          onTurn = undefined;
          resolve();
        }
      };
    });
    return outcomes;
  }

  it('12 callers at once whose calls wait on I/O (a database; the loop idle meanwhile), each sending its next when answered: nothing is shed', async () => {
    // demo-columnar's "reads its own writes under interleaved requests" (12 at once against
    // ClickHouse) was shed queue_time on a crowded machine: the calls asked faster than they
    // ended, as any population sent at once does, though they spent no CPU of this process.
    // A learned concurrency limit below the callers (as slower answers teach it) queues some.
    const { chain, ls } = shedding({ concurrency: { minLimit: 8, maxLimit: 8 } });
    made.push(ls);
    // A few calls before (the earlier requests of the test): the burst lands in an open window.
    await openLoop(chain, 3, 0.02, 1, { sync: true });
    const outcomes = await ioCallers(chain, { callers: 12, each: 30, cpuMs: () => 0.3 });
    expect(outcomes.filter((o) => o.how !== 'ran').map((o) => o.rejection?.source?.reason)).toEqual(
      [],
    );
  });

  it('the same 12 callers in a cold process on a crowded machine (their first calls dearest, clients slow to join and to send each next call): nothing is shed', async () => {
    // demo-columnar's interleaved requests, shed queue_time in CI and beside three CPU hogs (2 runs
    // of 6): its calls cost 9 ms of CPU each at first (code compiled as it runs), 3-6 later; the
    // test's clients, crowded, joined over 150 ms (after the first calls had taught the CPU per
    // call) and sent each next call late, so that the calls waiting rose by 7-10 over two windows
    // while the loop was busy, or fell to none and rose again. 100 runs of that shape (seeded):
    // three (35, 62, 92) were shed on the rule before (growth and CPU work alone).
    const refused: Array<{ seed: number; reasons: unknown[] }> = [];
    for (let run = 1; run <= 100; run++) {
      const { chain, ls } = shedding();
      made.push(ls);
      const random = seeded(run);
      const outcomes = await ioCallers(chain, {
        callers: 12,
        each: 14,
        cpuMs: (n) => (n < 12 ? 9 : n < 40 ? 6 : 4),
        clientDelayMs: () => random() * 40,
        joinMs: () => random() * 150,
        ioMaxMs: 40,
        seed: run * 7,
      });
      const reasons = outcomes
        .filter((o) => o.how !== 'ran')
        .map((o) => o.rejection?.source?.reason);
      if (reasons.length > 0) refused.push({ seed: run, reasons });
    }
    expect(refused).toEqual([]);
  });

  /**
   * A closed loop of `callers` (each sends its next call in the turn after its answer, shed or
   * not, as h2load's streams do) of calls costing `cpuMs(n)` of CPU (the nth call's handler; a
   * refusal costs REFUSAL_COST_MS, a shed call being cheaper than a served one but not free),
   * until `total` calls were sent; `stallMs(n)`: a stop of the loop before the nth call's handler
   * (a collection, code compiled), 0 for none; `joinMs(i)`: when caller i sends its first call
   * (ms from the start; 0, all at once, by default). Returns the outcomes.
   */
  async function closedLoop(
    chain: CallChain,
    opts: {
      callers: number;
      total: number;
      cpuMs: (n: number) => number;
      stallMs?: (n: number) => number;
      joinMs?: (i: number) => number;
    },
  ): Promise<Outcome[]> {
    const outcomes: Outcome[] = [];
    const began = clock.now();
    const joining = Array.from({ length: opts.callers }, (_, i) => ({
      i,
      at: began + (opts.joinMs?.(i) ?? 0),
    })).sort((a, b) => a.at - b.at);
    const idle: number[] = [];
    const send = (i: number): void => {
      const n = outcomes.length;
      const call = new CallContext(infoOf('/v1/hello'), headers);
      const outcome: Outcome = { path: '/v1/hello', how: 'pending', sentMs: clock.now() };
      outcomes.push(outcome);
      void startCall(chain, call, {
        proceed(c) {
          outcome.how = 'ran';
          const stall = opts.stallMs?.(n) ?? 0;
          if (stall > 0) clock.work(stall);
          clock.work(CALL_COST_MS + opts.cpuMs(n));
          endCall(c, 'OK');
          idle.push(i);
        },
        refuse(c, r) {
          outcome.how = 'refused';
          outcome.rejection = r;
          clock.work(REFUSAL_COST_MS);
          endCall(c, r.status);
          idle.push(i);
        },
      });
    };
    await new Promise<void>((resolve) => {
      onTurn = () => {
        // A loop with nothing to do waits for the next caller to join.
        if (joining[0] && idle.length === 0 && outcomes.every((o) => o.how !== 'pending'))
          clock.idle(Math.max(0, joining[0].at - clock.now()));
        while (joining[0] !== undefined && joining[0].at <= clock.now())
          idle.push(joining.shift()!.i);
        for (const i of idle.splice(0)) {
          if (outcomes.length >= opts.total) break;
          send(i);
        }
        if (outcomes.length >= opts.total) {
          onTurn = undefined;
          resolve();
        }
      };
    });
    await settled(outcomes);
    return outcomes;
  }

  it('64 callers in a closed loop of cheap calls in a cold process (its first calls dearest, a stop of the loop now and then): nothing is shed', async () => {
    // The gRPC bench's shape (h2load, 8 connections x 8 streams) on a fresh svcboot server: a
    // stop of the loop among cold, dear calls made a standing queue, a few calls were shed
    // (queue_time), each came back at once, and the asks that outran the ends were taken for an
    // open loop past capacity: 13,155 of 13,679 calls shed over 2 s, the served rate ~1/30 of
    // what the process serves (the gap between releases, measured in the stop, never measured
    // again while nothing stayed queued).
    const { chain, ls } = shedding();
    made.push(ls);
    const outcomes = await closedLoop(chain, {
      callers: 64,
      total: 20_000,
      cpuMs: (n) => (n < 300 ? 1 : n < 1500 ? 0.3 : 0.05),
      stallMs: (n) => (n % 2000 === 700 ? 30 : 0),
    });
    // While its calls are cold (1 ms each: 64 ms of work queued, over the 50 ms a standing queue
    // may hold), none is shed either: the queue holds the loop's 64 callers and never more, so the
    // shorter wait of a standing queue does not apply (PRESSURE_MIN_GROWTH). (Before: 2,524 of
    // the first calls refused, their callers' calls coming back at once taken for an open loop
    // past capacity until SERVED_SHARE_MIN ended it; before that, the overload held to the end:
    // 18,293 of the 20,000 calls refused.)
    const refused = outcomes.filter((o) => o.how !== 'ran');
    expect(refused.length).toBe(0);
  });

  it.each([
    ['0.2 ms calls, a queue standing now and then (its pace measured)', 0.2],
    ['0.05 ms calls that never queued before it (the pace unmeasured)', 0.05],
  ])(
    '64 callers in a closed loop, the process held 220 ms by a garbage collection mid-run, %s: nothing is shed around it',
    async (_what, cpuMs) => {
      // The gRPC bench's server, warm, ~10 s in: a mark-compact held it 220 ms (CPU time, so the
      // drain's pace measured it), the round after it moved the mean gap between releases to many
      // times the pace, the calls queued after the pause were shed on that wait (queue_time), came
      // back at once, and were taken for an open loop past capacity: 1,373 refused in that round.
      // Before: 533 refused from the pause on (0.2 ms); with a pace never measured, the estimate
      // was the mean latency over the calls in flight, which the pause inflated: 95 (0.05 ms).
      const { chain, ls } = shedding();
      made.push(ls);
      const outcomes = await closedLoop(chain, {
        callers: 64,
        total: 20_000,
        cpuMs: () => cpuMs,
        stallMs: (n) => (n === 8000 ? 220 : 0),
      });
      const refusedAt = outcomes.flatMap((o, n) => (o.how === 'ran' ? [] : [n]));
      expect(refusedAt).toEqual([]);
    },
  );

  it('calls of 10 ms offered at 1.3x what it serves (under the 1.5x that declares an overload): the standing queue is held short, so an admitted call waits no more than about 16 calls, not maxEventLoopDelayMs', async () => {
    // The open loop's queue grows past its peak when it began to stand (PRESSURE_MIN_GROWTH),
    // which a closed loop's never does: the shorter wait applies.
    const { chain, ls } = shedding();
    made.push(ls);
    await openLoop(chain, 5, 0.01, 10, { sync: true });
    // One call every 7.7 ms for 4 s: 520 calls, 5.2 s of work.
    const outcomes = await openLoop(chain, 520, 0.13, 10, { sync: true });
    const ran = outcomes.filter((o) => o.how === 'ran');
    const refused = outcomes.filter((o) => o.how === 'refused');
    expect(refused.length).toBeGreaterThan(50);
    expect(refused.every((o) => o.rejection?.source?.reason === 'queue_time')).toBe(true);
    const waits = ran.map((o) => o.ranMs! - o.sentMs!).sort((a, b) => a - b);
    // (Held at maxEventLoopDelayMs instead, the queue would let calls wait up to 500 ms.)
    expect(waits[waits.length - 1]).toBeLessThanOrEqual(200);
  });

  it('64 callers, 32 at once and the rest 5 ms apart, a closed loop of 0.5 ms calls, the process slowed to 3 ms a call for 60 calls mid-run: nothing is shed', async () => {
    // h2load's 64 HTTP/1.1 connections on a fresh server, ~1.5 s in (code compiled, a
    // collection): the queue's population seen in its first 25 ms was ~53 of 64, and in the slow
    // calls the ~62 waiting passed it by more than 8 with a wait over 50 ms: 27 refused. A closed
    // loop's queue waits longer while the process is slow; it does not grow. (Before: 1,989 of
    // the 20,000 calls refused here.)
    const { chain, ls } = shedding();
    made.push(ls);
    const outcomes = await closedLoop(chain, {
      callers: 64,
      total: 20_000,
      cpuMs: (n) => (n >= 8000 && n < 8060 ? 3 : 0.5),
      joinMs: (i) => (i < 32 ? 0 : (i - 31) * 5),
    });
    expect(outcomes.filter((o) => o.how !== 'ran')).toEqual([]);
  });

  it('the same calls at half what it serves (one of 5 ms every 10 ms), nothing is shed', async () => {
    const { chain, ls } = shedding();
    made.push(ls);
    const outcomes = await openLoop(chain, 100, 0.1, 5);
    expect(outcomes.filter((o) => o.how !== 'ran')).toEqual([]);
  });
});

describe('LoadShedding: deadlines at admission', () => {
  it('refuses at once a call whose deadline (the timeout middleware) cannot be met given the queue', async () => {
    const { chain, ls } = shedding({ maxEventLoopDelayMs: 2000 }, 150);
    made.push(ls);
    const outcomes = Array.from({ length: 40 }, () => start(chain, '/v1/render', 20));
    const deadlineRefusals = outcomes.filter(
      (o) => o.how === 'refused' && o.rejection?.message.includes('deadline'),
    );
    // Refused in the turn they arrived in, not when their deadline passed.
    expect(deadlineRefusals.length).toBeGreaterThan(0);
    await settled(outcomes);
    expect(outcomes.filter((o) => o.how === 'ran').length).toBeLessThan(15);
  });

  it('a call whose deadline passed before it could start is refused DeadlineExceeded, its handler never runs', async () => {
    const { chain, ls } = shedding();
    made.push(ls);
    const o = start(chain, '/v1/render', 0, { deadline: Date.now() - 1 });
    expect(o.how).toBe('refused');
    expect(o.rejection?.status).toBe('DeadlineExceeded');
  });
});

describe('LoadShedding: a queued call released too close to its deadline', () => {
  it('is refused (deadline) rather than run to end past it: each of 12 queued calls of 30 ms with deadlines 10 ms apart, on a crowded machine', async () => {
    const { chain, ls } = shedding({ maxEventLoopDelayMs: 2000 });
    made.push(ls);
    // The route's service time, learned on calls that ran alone.
    for (let i = 0; i < 5; i++) {
      await settled([start(chain, '/v1/work', 30)]);
      await sleep(20);
    }
    // The OS runs another process for 25 ms every turn: the queue drains slower than the CPU
    // time its estimate counts, so some calls are let in that are released with their
    // deadline near, not past.
    onTurn = () => clock.pause(25);
    const at = Date.now();
    const deadlines = Array.from({ length: 12 }, (_, i) => at + 150 + 10 * i);
    const outcomes = deadlines.map((deadline) => start(chain, '/v1/work', 30, { deadline }));
    await settled(outcomes);
    onTurn = undefined;
    expect(outcomes.filter((o) => o.how === 'ran').length).toBeGreaterThan(0);
    // Ended (handler start + its 30 ms) by its deadline, by the clock Date.now() reads.
    outcomes.forEach((o, i) => {
      if (o.how !== 'ran') return;
      expect(clock.dateMs() - clock.now() + o.ranMs! + 30, `call ${i}`).toBeLessThanOrEqual(
        deadlines[i]!,
      );
    });
    expect(
      outcomes.filter((o) => o.how === 'refused' && o.rejection?.message.includes('deadline'))
        .length,
    ).toBeGreaterThan(0);
  });
});

describe('LoadShedding: a burst of dear calls after a service learned on cheap ones', () => {
  it('cheap calls queued by a slow turn, then 80 calls of 30 ms in one turn with an 8 s deadline on a crowded machine: the queue is cut within a few releases, none runs past its deadline', async () => {
    const { chain, ls } = shedding();
    made.push(ls);
    // A running service: cheap calls, some of which a slow turn queued (the pace the queue
    // drains at is learned on them), then the dear route, one call at a time.
    for (let round = 0; round < 3; round++) {
      const slow = start(chain, '/v1/render', 15);
      const cheap = Array.from({ length: 32 }, () => start(chain, '/v1/cheap', 0));
      await settled([slow, ...cheap]);
      await sleep(50);
    }
    for (let i = 0; i < 5; i++) {
      await settled([start(chain, '/v1/work', 30)]);
      await sleep(20);
    }
    // The machine is crowded from now on: every turn the OS runs another process for 60 ms.
    onTurn = () => clock.pause(60);
    const deadline = Date.now() + 8000;
    const outcomes = Array.from({ length: 80 }, () => start(chain, '/v1/work', 30, { deadline }));
    await settled(outcomes);
    onTurn = undefined;
    const refused = outcomes.filter((o) => o.how === 'refused');
    const ran = outcomes.filter((o) => o.how === 'ran');
    expect(refused.length).toBeGreaterThan(0);
    for (const o of ran)
      expect(clock.dateMs() - clock.now() + o.ranMs! + 30).toBeLessThanOrEqual(deadline);
    // Refused early, as soon as the pace of the queue is seen: within the first second.
    expect(ran.filter((o) => o.ranMs! - o.sentMs! > 1000).length).toBeLessThan(refused.length);
  });
});
