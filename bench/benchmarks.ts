/** Every benchmark `npm run bench` knows, in the order it runs them. */
export interface Benchmark {
  name: string;
  description: string;
  /** Run from bench/. */
  command: readonly string[];
  timeoutMs: number;
}

const tsx = (file: string, ...args: string[]): string[] => [process.execPath, '--conditions=svcboot-source', '--import', 'tsx', file, ...args];

export const BENCHMARKS: Benchmark[] = [
  {
    name: 'events',
    description: 'The cost of one event record written to a file, console and json encodings, against pino.',
    command: tsx('events/run.ts'),
    timeoutMs: 120_000,
  },
  {
    name: 'cache',
    description: 'entry-cache local-tier hit, remote-tier hit and getOrLoad miss against lru-cache and ioredis used directly.',
    command: tsx('cache/run.ts'),
    timeoutMs: 180_000,
  },
  {
    name: 'demos',
    description: 'Start-up time of each demo to its first successful request (median of 10), and resident memory idle and under load.',
    command: tsx('demos/run.ts'),
    timeoutMs: 300_000,
  },
];
