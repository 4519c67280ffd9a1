import { spawnSync } from 'node:child_process';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { Counter, Registry } from 'prom-client';
import { afterEach, describe, expect, it } from 'vitest';
import { redactConfig } from '../config/secrets.js';
import { SvcError } from '../errors.js';
import {
  Child,
  RecordingPushgateway,
  startOnFreePort,
  waitFor,
  writeSelfSignedCert,
} from '@svcboot/testkit';
import { PromPusher, type PromPusherOptions } from './prom-pusher.js';
import { promSchema } from './schema.js';

function registryWithMetric(): Registry {
  const registry = new Registry();
  new Counter({ name: 'svc_test_pushed_total', help: 'a known metric', registers: [registry] }).inc(
    7,
  );
  return registry;
}

function logs() {
  const lines: string[] = [];
  return {
    lines,
    logger: {
      info: (m: string) => lines.push(`info ${m}`),
      warn: (m: string) => lines.push(`warn ${m}`),
    },
  };
}

const cleanup: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const c of cleanup.splice(0).reverse()) await c();
});

async function gateway(tls?: { cert: Buffer; key: Buffer }): Promise<RecordingPushgateway> {
  const g = await new RecordingPushgateway(tls).start();
  cleanup.push(() => g.close());
  return g;
}

function pusher(
  options: Partial<PromPusherOptions> & Pick<PromPusherOptions, 'remoteAddress'>,
  log = logs(),
) {
  const p = new PromPusher({
    registry: registryWithMetric(),
    intervalMs: 100,
    jobName: 'orders',
    instance: 'host-1:8080',
    basicAuth: '',
    configPath: 'grpc[api].prom.pusher',
    logger: log.logger,
    ...options,
  });
  cleanup.push(() => p.stop(AbortSignal.timeout(5000)));
  return p;
}

describe('PromPusher', () => {
  it('PUTs the registry to the group with basic auth, repeatedly, and DELETEs the group at stop', async () => {
    const g = await gateway();
    const log = logs();
    const p = pusher({ remoteAddress: `127.0.0.1:${g.port}`, basicAuth: 'pusher:s3cr3t-pw' }, log);
    p.start();
    await g.until((all) => all.filter((r) => r.method === 'PUT').length >= 2);
    const put = g.received[0]!;
    expect(put.method).toBe('PUT');
    expect(put.url).toBe('/metrics/job/orders/instance/host-1:8080');
    expect(put.authorization).toBe(`Basic ${Buffer.from('pusher:s3cr3t-pw').toString('base64')}`);
    expect(put.contentType).toBe('text/plain; version=0.0.4; charset=utf-8');
    expect(put.body).toContain('# TYPE svc_test_pushed_total counter');
    expect(put.body).toContain('svc_test_pushed_total 7');
    await p.stop(AbortSignal.timeout(5000));
    const last = g.received.at(-1)!;
    expect([last.method, last.url, last.authorization]).toEqual([
      'DELETE',
      '/metrics/job/orders/instance/host-1:8080',
      put.authorization,
    ]);
    const group = '/metrics/job/orders/instance/host-1:8080';
    const count = g.received.filter((r) => r.url === group).length;
    // No push after the stop. The clock is a second pusher on the same interval: its third push
    // comes three intervals on, in which a pusher still running would have pushed again (on a
    // loaded machine both timers run late alike; a fixed sleep would not).
    const clock = pusher({ remoteAddress: `127.0.0.1:${g.port}`, instance: 'clock' });
    clock.start();
    await g.until((all) => all.filter((r) => r.url.endsWith('/instance/clock')).length >= 3);
    expect(g.received.filter((r) => r.url === group).length).toBe(count);
    expect(log.lines.join('\n')).not.toContain('s3cr3t-pw');
  });

  it('backs off after failures, logs without credentials, and says when it works again', async () => {
    const g = await gateway();
    let refusals = 3;
    g.status = (r) => (r.method === 'PUT' && refusals-- > 0 ? 503 : 200);
    const log = logs();
    const p = pusher(
      { remoteAddress: `http://u:url-pw@127.0.0.1:${g.port}/`, intervalMs: 100, maxBackoffMs: 400 },
      log,
    );
    expect([1, 2, 3, 4, 10].map((n) => p.delayAfter(n))).toEqual([200, 400, 400, 400, 400]);
    expect(p.delayAfter(0)).toBe(100);
    p.start();
    await g.until((all) => all.filter((r) => r.method === 'PUT').length >= 5);
    // Credentials from the URL become basic auth, and leave the URL.
    expect(g.received[0]!.authorization).toBe(
      `Basic ${Buffer.from('u:url-pw').toString('base64')}`,
    );
    expect(p.url.href).toBe(`http://127.0.0.1:${g.port}/metrics/job/orders/instance/host-1:8080`);
    const text = log.lines.join('\n');
    expect(text).toMatch(
      /^warn grpc\[api\]\.prom\.pusher: push to http:\/\/127\.0\.0\.1:\d+\/metrics\/job\/orders\/instance\/host-1:8080 failed \(1 in a row\): HTTP 503; next try in 200 ms$/m,
    );
    // Once a minute at most: the second and third failures are not logged.
    expect(log.lines.filter((l) => l.startsWith('warn')).length).toBe(1);
    expect(text).toMatch(/works again after 3 failure\(s\)/);
    expect(text).not.toContain('url-pw');
  });

  it('uses the Pushgateway base64 form for values with a slash or empty, under a path prefix', async () => {
    const g = await gateway();
    const p = pusher({
      remoteAddress: `http://127.0.0.1:${g.port}/pgw/`,
      jobName: 'a/b',
      instance: '',
    });
    p.start();
    await g.until((all) => all.length >= 1);
    expect(g.received[0]!.url).toBe(
      `/pgw/metrics/job@base64/${Buffer.from('a/b').toString('base64url')}/instance@base64/=`,
    );
  });

  it('pushes over TLS with a cert entry CA (https without a scheme)', async () => {
    const dir = await mkdtemp(path.join(os.tmpdir(), 'pusher-tls-'));
    cleanup.push(() => rm(dir, { recursive: true, force: true }));
    const { key, cert } = writeSelfSignedCert(dir);
    const material = { cert: await readFile(cert), key: await readFile(key) };
    const g = await gateway(material);
    const p = pusher({ remoteAddress: `localhost:${g.port}`, tls: { ca: material.cert } });
    expect(p.url.protocol).toBe('https:');
    p.start();
    await g.until((all) => all.some((r) => r.method === 'PUT'));
    await p.stop(AbortSignal.timeout(5000));
    expect(g.received.at(-1)!.method).toBe('DELETE');
    // Without the CA, the push fails verification and is logged.
    const log = logs();
    const untrusted = pusher({ remoteAddress: `https://localhost:${g.port}` }, log);
    untrusted.start();
    await waitFor(
      'the failed push to be logged',
      () => log.lines.some((l) => l.startsWith('warn')),
      {
        timeoutMs: 20_000,
      },
    );
    expect(log.lines.join('\n')).toMatch(/self-signed certificate/);
  });

  it('gives up the DELETE when the shutdown budget is spent', async () => {
    const g = await gateway();
    g.status = (r) => (r.method === 'DELETE' ? 0 : 200);
    const log = logs();
    const p = pusher({ remoteAddress: `127.0.0.1:${g.port}` }, log);
    p.start();
    await g.until((all) => all.length >= 1);
    const budget = new AbortController();
    const stopped = p.stop(budget.signal);
    await g.until((all) => all.some((r) => r.method === 'DELETE'));
    budget.abort();
    await stopped;
    expect(log.lines.join('\n')).toMatch(/deleting .* from the Pushgateway failed/);
  });

  it('refuses an address it cannot use without repeating it', () => {
    for (const [remoteAddress, tls] of [
      ['ftp://u:hidden@host:21', undefined],
      ['http://u:hidden@host:9091', { ca: Buffer.from('x') }],
      ['http://host:9091/?q=hidden', undefined],
    ] as const) {
      let err: unknown;
      try {
        new PromPusher({
          registry: new Registry(),
          intervalMs: 1000,
          jobName: 'j',
          instance: 'i',
          remoteAddress,
          basicAuth: '',
          ...(tls ? { tls } : {}),
          configPath: 'grpc[api].prom.pusher',
          logger: logs().logger,
        });
      } catch (e) {
        err = e;
      }
      expect(err).toBeInstanceOf(SvcError);
      expect((err as SvcError).code).toBe('SVC_PROM_PUSHER_ADDRESS');
      expect((err as Error).message).toMatch(/^grpc\[api\]\.prom\.pusher\.remoteAddress /);
      expect((err as Error).message).not.toContain('hidden');
    }
  });
});

describe('prom options', () => {
  it('keep prom.enabled/path and add pusher, off by default; an enabled pusher needs remoteAddress', () => {
    expect(promSchema.parse(undefined)).toEqual({
      enabled: false,
      path: '/metrics',
      pusher: {
        enabled: false,
        intervalMs: 1000,
        jobName: '',
        remoteAddress: '',
        basicAuth: '',
        certEntry: '',
        instance: '',
      },
    });
    const issues = promSchema.safeParse({ pusher: { enabled: true, basicAuth: 'nocolon' } }).error
      ?.issues;
    expect(issues?.map((i) => i.path.join('.'))).toEqual([
      'pusher.remoteAddress',
      'pusher.basicAuth',
    ]);
    expect(JSON.stringify(issues)).not.toContain('nocolon');
  });

  it('treat basicAuth as a secret when a config is printed', () => {
    const printed = JSON.stringify(redactConfig({ prom: { pusher: { basicAuth: 'me:pw' } } }));
    expect(printed).not.toContain('me:pw');
  });
});

describe('PromPusher against the real Prometheus Pushgateway (Debian prometheus-pushgateway)', () => {
  it('its pushes are accepted and served under the job and instance labels, and its DELETE at stop removes the group', async () => {
    if (spawnSync('sh', ['-c', 'command -v prometheus-pushgateway']).status !== 0)
      throw new Error(
        'prometheus-pushgateway is not on PATH: install it (`apt-get install prometheus-pushgateway`)',
      );
    const { child, port } = await startOnFreePort(
      (port) =>
        Child.start('prometheus-pushgateway', [
          `--web.listen-address=127.0.0.1:${port}`,
          '--persistence.file=',
        ]),
      {
        what: 'the Pushgateway to be ready',
        ready: async (_child, port) =>
          (await fetch(`http://127.0.0.1:${port}/-/ready`).catch(() => undefined))?.ok === true,
        timeoutMs: 20_000,
      },
    );
    cleanup.push(async () => {
      child.kill();
      await child.exited;
    });
    const base = `http://127.0.0.1:${port}`;
    const p = pusher({ remoteAddress: `127.0.0.1:${port}` });
    p.start();
    const metrics = await waitFor('the pushed metric on the Pushgateway', async () => {
      const text = await (await fetch(`${base}/metrics`)).text();
      return text.includes('svc_test_pushed_total{') ? text : false;
    });
    expect(metrics).toMatch(/^svc_test_pushed_total\{instance="host-1:8080",job="orders"\} 7$/m);
    // The Pushgateway's own note of the group's last push: a success, no failure.
    expect(metrics).toMatch(/^push_time_seconds\{instance="host-1:8080",job="orders"\} [1-9]/m);
    expect(metrics).toMatch(
      /^push_failure_time_seconds\{instance="host-1:8080",job="orders"\} 0$/m,
    );
    await p.stop(AbortSignal.timeout(5000));
    const after = await (await fetch(`${base}/metrics`)).text();
    expect(after).not.toContain('job="orders"');
  });
});
