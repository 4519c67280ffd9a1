import { randomFillSync } from 'node:crypto';

/** How many ids one refill of the pool gives. */
const POOL_IDS = 256;
/** Each id's 16 random bytes. */
const pool = Buffer.allocUnsafe(POOL_IDS * 16);
/** The pool's bytes as hex, 32 digits per id (made at each refill, in one native call). */
let hex = '';
/** The next id's offset in `hex`; at hex.length the pool is used up. */
let next = 0;

/** The variant digit (RFC 9562 §4.1: the top two bits 10) for a random hex digit's character code. */
const VARIANT: string[] = [];
for (let d = 0; d < 16; d++) VARIANT['0123456789abcdef'.charCodeAt(d)] = '89ab'[d & 3]!;

/**
 * A new random UUID (version 4, RFC 9562 §5.4: 122 random bits from the CSPRNG), as
 * `crypto.randomUUID()` gives one: the random bytes of 256 ids are drawn and turned into hex at a
 * time, and each call cuts its id's five groups out of that (the version digit `4` in place of
 * the 13th, the 17th mapped onto the variant's 8, 9, a or b), rather than formatting 16 bytes
 * digit by digit.
 */
export function newRequestId(): string {
  let o = next;
  if (o === hex.length) {
    randomFillSync(pool);
    hex = pool.toString('hex');
    o = 0;
  }
  next = o + 32;
  return (
    hex.slice(o, o + 8) +
    '-' +
    hex.slice(o + 8, o + 12) +
    '-4' +
    hex.slice(o + 13, o + 16) +
    '-' +
    VARIANT[hex.charCodeAt(o + 16)]! +
    hex.slice(o + 17, o + 20) +
    '-' +
    hex.slice(o + 20, o + 32)
  );
}
