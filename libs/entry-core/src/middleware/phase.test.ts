import { describe, expect, it } from 'vitest';
import { placeInPhases, type MiddlewarePlacement } from './phase.js';

const item = (key: string | undefined, placement: MiddlewarePlacement) => ({ key, placement });
const keys = (items: readonly { key: string | undefined }[]) => items.map((m) => m.key ?? '-');

describe('placeInPhases', () => {
  it('orders by phase, then by before/after within a phase, else as listed', () => {
    const placed = placeInPhases([
      item('timeout', { phase: 'deadline' }),
      item('prom', { phase: 'observe' }),
      item('logging', { phase: 'observe', after: 'prom' }),
      item('meta', { phase: 'edge' }),
      item('trace', { phase: 'observe', after: 'prom', before: 'logging' }),
      item(undefined, { phase: 'observe' }),
    ]);
    expect(keys(placed)).toEqual(['meta', 'prom', 'trace', 'logging', '-', 'timeout']);
  });

  it('ignores a before/after naming a key not in the chain or in another phase', () => {
    const placed = placeInPhases([
      item('auth', { phase: 'authn' }),
      item('jwt', { phase: 'authn', after: 'auth', before: 'nowhere' }),
      item('csrf', { phase: 'authz', before: 'auth' }),
    ]);
    expect(keys(placed)).toEqual(['auth', 'jwt', 'csrf']);
  });

  it('refuses a cycle, naming its keys, and an unknown phase', () => {
    expect(() =>
      placeInPhases([
        item('a', { phase: 'limit', before: 'b' }),
        item('b', { phase: 'limit', before: 'a' }),
      ]),
    ).toThrow(/a, b \(phase "limit"\) ask to run before and after each other/);
    expect(() => placeInPhases([item('x', { phase: 'late' as never })])).toThrow(
      /unknown phase "late"; one of edge, observe/,
    );
  });
});
