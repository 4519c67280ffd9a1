/**
 * A guard with an asynchronous step (jwt verifies its token) on a gRPC client stream: the messages
 * wait, in order, until the call is let through. What jwt does on every transport is checked by
 * tools/conformance, its options in libs/middleware-jwt.
 */
// Makes middleware.jwt configurable, as an app's import of the package does.
import '@svcboot/middleware-jwt';
import type { Metadata, ServiceError } from '@grpc/grpc-js';
import { SignJWT } from 'jose';
import { afterEach, describe, expect, it } from 'vitest';
import type { Harness } from './test-support/harness.js';
import { md, startGuarded } from './test-support/guarded.js';

const SECRET = 'jwt-secret-for-the-transport-tests-0123456789';
const JWT = `      jwt:
        enabled: true
        symmetric: { algorithm: HS256, token: "\${JWT_SECRET}" }
        tokenLookup: "header:Authorization,query:access_token,cookie:jwt"
        issuer: https://id.example
        audience: library
        ignore: ["/test.v1.Library/Fail"]
`;

const now = () => Math.floor(Date.now() / 1000);
function token(claims: Record<string, unknown> = {}, alg = 'HS256'): Promise<string> {
  const base = {
    iss: 'https://id.example',
    aud: 'library',
    sub: 'alice',
    role: 'admin',
    exp: now() + 300,
  };
  return new SignJWT({ ...base, ...claims })
    .setProtectedHeader({ alg })
    .sign(new TextEncoder().encode(SECRET));
}
let h: Harness | undefined;
afterEach(async () => {
  await h?.stop();
  h = undefined;
});

/** A client-streaming call (Collect) sending `titles` at once: the messages arrive while the token is verified. */
function collect(client: Harness['client'], titles: string[], metadata: Metadata) {
  return new Promise<{ hits?: string[]; error?: ServiceError }>((resolve) => {
    const call = client['Collect']!(metadata, (error: ServiceError | null, r: { hits: string[] }) =>
      resolve(error ? { error } : { hits: r.hits }),
    ) as { write(m: unknown): void; end(): void };
    for (const title of titles) call.write({ title });
    call.end();
  });
}

describe('jwt on a gRPC client stream', () => {
  it('holds the messages sent at once while the token is verified, then hands them on in order; refuses the stream without a token', async () => {
    const handled: string[] = [];
    h = await startGuarded(JWT, { JWT_SECRET: SECRET }, handled);
    const streamed = await collect(
      h.client,
      ['a', 'b', 'c'],
      md({ authorization: `Bearer ${await token()}` }),
    );
    expect(streamed).toEqual({ hits: ['a', 'b', 'c'] });
    const refused = await collect(h.client, ['x'], md({}));
    expect([refused.error?.code, refused.error?.details]).toEqual([
      16,
      'missing token: send Authorization: Bearer <token> or query parameter access_token or cookie jwt',
    ]);
  });
});
