/**
 * Reflection behind `jwt` (issue #40): the reflection service is checked like any other, so
 * `buf curl` needs the token on its reflection calls too (`--reflect-header`; `-H` goes with the
 * call only). What the README's "Reflection" section tells a reader.
 */
// Makes middleware.jwt configurable, as an app's import of the package does.
import '@svcboot/middleware-jwt';
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { bufBinary } from '@svcboot/testkit';
import { SignJWT } from 'jose';
import { afterAll, beforeAll, expect, it } from 'vitest';
import type { Harness } from './test-support/harness.js';
import { startGuarded } from './test-support/guarded.js';

const run = promisify(execFile);
const SECRET = 'jwt-secret-for-the-reflection-test-0123456789';
// The jwt block under `middleware:`, then reflection on the entry (the text ends the entry).
const YAML = `      jwt:
        enabled: true
        symmetric: { algorithm: HS256, token: "\${JWT_SECRET}" }
    enableReflection: true
`;

let h: Harness;
let auth: string;
let buf: string;

beforeAll(async () => {
  buf = await bufBinary();
  h = await startGuarded(YAML, { JWT_SECRET: SECRET }, []);
  const token = await new SignJWT({ sub: 'alice', role: 'reader' })
    .setProtectedHeader({ alg: 'HS256' })
    .setExpirationTime('5m')
    .sign(new TextEncoder().encode(SECRET));
  auth = `Authorization: Bearer ${token}`;
});

afterAll(async () => {
  await h?.stop();
});

const curl = (...args: string[]) =>
  run(buf, ['curl', '--protocol', 'grpc', '--http2-prior-knowledge', ...args]);

it('buf curl needs --reflect-header for the reflection calls; -H alone is refused', async () => {
  const refused = await curl('-H', auth, '--list-services', h.base).then(
    () => undefined,
    (err: Error & { stderr?: string }) => err,
  );
  expect(refused).toBeInstanceOf(Error);
  // buf curl words the refused reflection call (UNAUTHENTICATED) as a Buf registry login problem.
  expect(refused?.stderr).toContain('you are not authenticated');

  const { stdout } = await curl('--reflect-header', auth, '--list-services', h.base);
  expect(stdout.trim().split('\n')).toContain('test.v1.Library');

  const call = await curl(
    '-H',
    auth,
    '--reflect-header',
    auth,
    '-d',
    '{}',
    `${h.base}/test.v1.Library/Ping`,
  );
  expect(JSON.parse(call.stdout)).toEqual({ text: 'jwt:alice:reader' });
});
