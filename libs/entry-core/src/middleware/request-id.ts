import { randomFillSync } from 'node:crypto';

/** How many ids one refill of the pool gives. */
const POOL_IDS = 256;
/** Each id's 16 random bytes. */
const pool = Buffer.allocUnsafe(POOL_IDS * 16);
/** The pool's ids, formatted, one after another (36 characters each; made at each refill). */
let ids = '';
/** The next id's offset in `ids`; at ids.length the pool is used up. */
let next = 0;
/** The length of a formatted UUID. */
const ID_LENGTH = 36;

/** The character codes of the hex digits. */
const HEX_DIGIT = Buffer.from('0123456789abcdef', 'latin1');
/** The pool's ids as ASCII, written at each refill. */
const text = Buffer.allocUnsafe(POOL_IDS * ID_LENGTH);

/**
 * Draws the random bytes of POOL_IDS ids and formats them into `ids`, in one pass over the bytes
 * and one string: each byte two hex digits, a dash before bytes 4, 6, 8 and 10, the version
 * digit `4` in place of byte 6's first digit, byte 8's first digit mapped onto the variant's 8,
 * 9, a or b (RFC 9562 §4.1: the top two bits 10).
 */
function refill(): void {
  randomFillSync(pool);
  let t = 0;
  for (let i = 0; i < pool.length; i++) {
    const byte = pool[i]!;
    const k = i & 15;
    let high = byte >> 4;
    if (k === 4 || k === 6 || k === 8 || k === 10) {
      text[t++] = 0x2d; // '-'
      if (k === 6) high = 4;
      else if (k === 8) high = 8 | (high & 3);
    }
    text[t++] = HEX_DIGIT[high]!;
    text[t++] = HEX_DIGIT[byte & 15]!;
  }
  ids = text.toString('latin1', 0, t);
}

/**
 * A new random UUID (version 4, RFC 9562 §5.4: 122 random bits from the CSPRNG), as
 * `crypto.randomUUID()` gives one: the random bytes of 256 ids are drawn, turned into hex and
 * formatted at a time (the version digit `4` in place of the 13th, the 17th mapped onto the
 * variant's 8, 9, a or b), and each call cuts its id out of that: one flat slice per call, not a
 * tree of nine parts that the header check and the record's encoding then flatten again.
 */
export function newRequestId(): string {
  let o = next;
  if (o === ids.length) {
    refill();
    o = 0;
  }
  next = o + ID_LENGTH;
  return ids.slice(o, o + ID_LENGTH);
}
