import { boot, type App } from '@svcboot/entry-core';
import { afterEach, describe, expect, it } from 'vitest';
import { httpEntry } from './index.js';

let app: App | undefined;
afterEach(async () => {
  await app?.shutdown('test');
  app = undefined;
});

async function serve(errorModel: string): Promise<string> {
  app = await boot({
    argv: [],
    env: {},
    configText: [
      'app: { name: errs }',
      'logger: [{ name: quiet, level: silent }]',
      'httpserver:',
      '  - name: api',
      '    port: 0',
      '    host: 127.0.0.1',
      '    loggerEntry: quiet',
      `    errorModel: ${errorModel}`,
    ].join('\n'),
  });
  const entry = httpEntry(app, 'api');
  entry.router.get('/v1/boom', () => {
    throw new Error('SECRET connection string');
  });
  entry.router.get('/v1/gone', (ctx) => {
    ctx.status = 410;
  });
  entry.router.get('/v1/upstream', () => {
    // an error from a downstream client that happens to carry a status: not meant for the caller
    throw Object.assign(new Error('upstream said: SECRET host db-7'), { status: 404 });
  });
  entry.router.get('/v1/who', (ctx) => {
    ctx.throw(401, 'who are you?', { headers: { 'WWW-Authenticate': 'Basic realm="x"' } });
  });
  entry.router.get('/v1/user', (ctx) => {
    ctx.status = 404;
    ctx.body = 'user not found';
  });
  await app.bootstrap();
  return `http://127.0.0.1:${entry.port}`;
}

describe('errorModel: the JSON error body of errors the entry produces itself', () => {
  it('google (the default): {"error": {code, status, message, details: [RequestInfo]}} for 404, 405, 500 and bare 4xx', async () => {
    const base = await serve('google');
    const notFound = await fetch(`${base}/nowhere`, { headers: { 'x-request-id': 'r-1' } });
    expect(notFound.status).toBe(404);
    expect(await notFound.json()).toEqual({
      error: {
        code: 404,
        status: 'NOT_FOUND',
        message: 'not found',
        details: [{ '@type': 'type.googleapis.com/google.rpc.RequestInfo', requestId: 'r-1' }],
      },
    });
    const wrongMethod = await fetch(`${base}/v1/boom`, { method: 'DELETE' });
    expect(wrongMethod.status).toBe(405);
    expect(wrongMethod.headers.get('allow')).toContain('GET');
    expect(((await wrongMethod.json()) as { error: { status: string } }).error.status).toBe(
      'UNIMPLEMENTED',
    );
    const boom = await fetch(`${base}/v1/boom`);
    const text = await boom.text();
    expect(boom.status).toBe(500);
    expect(text).not.toContain('SECRET');
    expect(JSON.parse(text)).toMatchObject({ error: { code: 500, message: 'internal error' } });
    const gone = await fetch(`${base}/v1/gone`);
    expect([gone.status, ((await gone.json()) as { error: { code: number } }).error.code]).toEqual([
      410, 410,
    ]);
    // Koa's rule: a 4xx error's message is shown only when it says so (ctx.throw does)
    const upstream = await fetch(`${base}/v1/upstream`);
    const upstreamText = await upstream.text();
    expect([upstream.status, upstreamText.includes('SECRET')]).toEqual([404, false]);
    expect(JSON.parse(upstreamText)).toMatchObject({ error: { message: 'not found' } });
    const who = await fetch(`${base}/v1/who`);
    expect([who.status, who.headers.get('www-authenticate')]).toEqual([401, 'Basic realm="x"']);
    expect(await who.json()).toMatchObject({ error: { message: 'who are you?' } });
    // a body the handler wrote is its own
    const user = await fetch(`${base}/v1/user`);
    expect([user.status, await user.text()]).toEqual([404, 'user not found']);
  });

  it('amazon: {"response": {"errors": [{"error": {…}}]}, "requestId"}', async () => {
    const base = await serve('amazon');
    const res = await fetch(`${base}/nowhere`, { headers: { 'x-request-id': 'r-2' } });
    expect(res.status).toBe(404);
    expect(await res.json()).toEqual({
      response: {
        errors: [{ error: { code: 404, status: 'Not Found', message: 'not found', details: [] } }],
      },
      requestId: 'r-2',
    });
  });

  it('refuses an unknown model at boot, naming the path', async () => {
    await expect(serve('yahoo')).rejects.toThrow(/httpserver\[api\]\.errorModel|errorModel/);
  });
});
