// npm run token -w apps/demo-secure -- [subject] [ttlSec]: prints a JWT the demo accepts (HS256,
// signed with $DEMO_JWT_SECRET or the demo's default), for `Authorization: Bearer <token>`.
import { mintDemoToken } from './token.js';

const [subject = 'alice', ttl = '3600'] = process.argv.slice(2);
const ttlSec = Number(ttl);
if (!Number.isInteger(ttlSec)) {
  console.error(
    `ttlSec must be a whole number of seconds (negative for an expired token), not "${ttl}"`,
  );
  process.exit(2);
}
console.log(await mintDemoToken({ subject, ttlSec, claims: { roles: ['demo'] } }));
