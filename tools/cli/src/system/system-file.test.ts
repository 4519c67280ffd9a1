import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { DEFAULT_FENCES, loadSystem, parseSystem, SystemError } from './system-file.js';

const repo = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../../..');
const chain = path.join(repo, 'apps/demo-chain');
const tmp = mkdtempSync(path.join(tmpdir(), 'svc-system-'));
afterAll(() => rmSync(tmp, { recursive: true, force: true }));

describe('svc.system.yaml', () => {
  it("reads demo-chain's system: services, their boot.yaml, who calls whom", () => {
    const s = loadSystem(path.join(chain, 'svc.system.yaml'));
    expect(s.name).toBe('demo-chain');
    expect(s.namespace).toBe('demo-chain');
    expect(s.services.map((x) => [x.name, x.dir, x.config, x.args])).toEqual([
      ['front', chain, 'front.yaml', ['front']],
      ['users', chain, 'users.yaml', ['users']],
      ['billing', chain, 'billing.yaml', ['billing']],
    ]);
    expect(s.services[0]?.calls).toEqual([
      { client: 'users', service: 'users', entry: undefined },
      { client: 'billing', service: 'billing', entry: undefined },
    ]);
    expect(s.services[0]?.public).toEqual(['front']);
    expect(s.services[2]?.env).toEqual({ BILLING_HOST: '0.0.0.0' });
    expect(s.fences).toEqual(DEFAULT_FENCES);
  });

  it('names every problem at once, each with where and its line', () => {
    const text = [
      'name: Demo_Chain',
      'services:',
      '  front:',
      `    dir: ${chain}`,
      '    config: front.yaml',
      '    calls: { users: userz, self: front/front }',
      '    replicas: 3',
      '  users:',
      `    dir: ${chain}`,
      '    config: nosuch.yaml',
      'fences:',
      '  scraper: { namespace: obs, pods: { app: vm } }',
    ].join('\n');
    let caught: unknown;
    try {
      parseSystem(text, path.join(tmp, 'svc.system.yaml'));
    } catch (err) {
      caught = err;
    }
    expect(caught).toBeInstanceOf(SystemError);
    const e = caught as SystemError;
    expect(e.code).toBe('SVC_SYSTEM_INVALID');
    expect(e.problems).toEqual([
      `name (line 1): "Demo_Chain" is not a DNS label (a-z, 0-9, '-'; ≤ 63)`,
      'services.front.replicas (line 7): unknown key; expected one of dir, config, args, public, calls, env',
      `services.users.config (line 10): no nosuch.yaml in ${chain}`,
      'services.front.calls.users (line 6): "userz" is no service of the system (services: front, users)',
      'services.front.calls.self (line 6): a service calling itself needs no wiring',
    ]);
    expect(e.message).toMatch(/5 problems\n {2}- name \(line 1\)[\s\S]*\[SVC_SYSTEM_INVALID\]$/);
  });

  it('a missing file says what to write', () => {
    expect(() => loadSystem(path.join(tmp, 'none.yaml'))).toThrow(
      /no system file .*none\.yaml: write svc\.system\.yaml .*\[SVC_SYSTEM_NOT_FOUND\]/,
    );
  });

  it('fences: the scraper and the ingress controller can be named', () => {
    const s = parseSystem(
      `name: x\nservices:\n  a: { dir: ${chain}, config: users.yaml }\nfences:\n  scraper: { namespace: obs, pods: { app: vm } }\n`,
      path.join(tmp, 'svc.system.yaml'),
    );
    expect(s.fences.scraper).toEqual({ namespace: 'obs', pods: { app: 'vm' } });
  });
});
