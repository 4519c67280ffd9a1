/** In-process measurement: run an async operation many times, with some concurrency, and report. */
export interface Measurement {
  name: string;
  ops: number;
  seconds: number;
  opsPerSec: number;
  p50Us: number;
  p99Us: number;
}

export interface MeasureOptions {
  /** Operations to time (after the warm-up). */
  iterations?: number;
  warmup?: number;
  /** Operations in flight at once. */
  concurrency?: number;
}

export async function measure(
  name: string,
  op: (i: number) => Promise<unknown> | unknown,
  options: MeasureOptions = {},
): Promise<Measurement> {
  const iterations = options.iterations ?? 50_000;
  const warmup = options.warmup ?? Math.min(5_000, iterations / 5);
  const concurrency = options.concurrency ?? 1;
  for (let i = 0; i < warmup; i++) await op(i);
  const latencies = new Float64Array(iterations);
  let next = 0;
  const started = process.hrtime.bigint();
  const worker = async (): Promise<void> => {
    for (;;) {
      const i = next++;
      if (i >= iterations) return;
      const t0 = process.hrtime.bigint();
      await op(i);
      latencies[i] = Number(process.hrtime.bigint() - t0) / 1000;
    }
  };
  await Promise.all(Array.from({ length: concurrency }, worker));
  const seconds = Number(process.hrtime.bigint() - started) / 1e9;
  latencies.sort();
  return {
    name,
    ops: iterations,
    seconds,
    opsPerSec: iterations / seconds,
    p50Us: latencies[Math.floor(iterations * 0.5)]!,
    p99Us: latencies[Math.floor(iterations * 0.99)]!,
  };
}

/** A markdown table of framework paths against their bare peers. */
export function comparisonTable(
  rows: ReadonlyArray<{ path: Measurement; peer: Measurement }>,
): string {
  const fmt = (n: number, digits = 0): string =>
    n.toLocaleString('en-US', { maximumFractionDigits: digits, minimumFractionDigits: digits });
  const lines = [
    '| path | ops/s | p50 µs | p99 µs | bare peer | peer ops/s | peer p50 µs | peer p99 µs | ratio |',
    '|---|---:|---:|---:|---|---:|---:|---:|---:|',
  ];
  for (const { path, peer } of rows) {
    lines.push(
      `| ${path.name} | ${fmt(path.opsPerSec)} | ${fmt(path.p50Us, 1)} | ${fmt(path.p99Us, 1)} | ${peer.name} | ${fmt(peer.opsPerSec)} | ${fmt(peer.p50Us, 1)} | ${fmt(peer.p99Us, 1)} | ${(path.opsPerSec / peer.opsPerSec).toFixed(2)} |`,
    );
  }
  return lines.join('\n');
}
