/**
 * What load shedding costs a call that it lets through: server CPU per request of an httpserver
 * entry with no middleware, loadShedding off against on (the default), 20,000 GETs from a client
 * process (tools/scripts/keepalive-get-client.mjs: 16 keep-alive connections), two rounds.
 *   node --conditions=svcboot-source --import tsx tools/scripts/shedding-cpu.ts
 */
import { spawn } from 'node:child_process';
import path from 'node:path';
import { boot } from '@svcboot/entry-core';
import { httpEntry } from '@svcboot/entry-http';

const N = 20_000;
const client = path.resolve('tools/scripts/keepalive-get-client.mjs');

function drive(port: number, total: number): Promise<string> {
  return new Promise((resolve) => {
    const c = spawn(process.execPath, [client, String(port), String(total), '16']);
    let out = '';
    c.stdout.on('data', (b: Buffer) => (out += b.toString()));
    c.on('exit', () => resolve(out.trim()));
  });
}

for (const round of [1, 2]) {
  for (const shed of [false, true]) {
    const app = await boot({
      argv: [],
      env: {},
      configText: `httpserver:\n  - name: api\n    port: 0\n    host: 127.0.0.1\n    loadShedding: { enabled: ${shed} }\n`,
    });
    httpEntry(app, 'api').router.get('/v1/ok', (ctx) => {
      ctx.body = { ok: true };
    });
    await app.bootstrap();
    const port = httpEntry(app, 'api').port;
    await drive(port, 2000);
    const before = process.cpuUsage();
    const out = await drive(port, N);
    const cpu = process.cpuUsage(before);
    console.log(
      `round ${round} loadShedding ${shed ? 'on ' : 'off'}: ${((cpu.user + cpu.system) / N).toFixed(1)} µs server CPU/request ${out}`,
    );
    await app.shutdown();
  }
}
