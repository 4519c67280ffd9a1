/**
 * The binary encoder of typed messages that are not flat (flat-encoder.ts has those): nested
 * messages, lists, maps, oneofs, 64-bit integers, explicit presence, written into one growing
 * Buffer as @bufbuild/protobuf's toBinary writes them (fields in number order, each skipped at its
 * zero value unless it has explicit presence, packed lists, map entries in Object.keys order, a
 * nested message's length as the shortest varint) without its BinaryWriter's chunk per fork.
 *
 * Compiled once per proto3 message type. A type it does not cover (another edition, a group, a
 * well-known type protobuf-es holds in another form, a type reaching one) has no encoder, and any
 * value it does not take as toBinary would (a value of another type than its field's, a number
 * out of range, a 64-bit integer that is not a bigint, null, a message of another type, unknown
 * fields kept from a decode, a map key toBinary would read otherwise) makes the encoder return
 * undefined: the caller then takes toBinary, whose bytes or error stand (codec.test.ts and
 * message-encoder.test.ts: both against toBinary on random messages).
 */
import type { DescField, DescMessage, DescOneof } from '@bufbuild/protobuf';
import { ScalarType, wireTypeOf } from './scalar-type.js';

const EDITION_PROTO3 = 999;
const IMPLICIT = 2;
const FLOAT32_MAX = 3.4028234663852886e38;
const INT64_MIN = -(2n ** 63n);
const INT64_MAX = 2n ** 63n - 1n;
const UINT64_MAX = 2n ** 64n - 1n;

/** Thrown inside the compiled code where toBinary takes the value. */
class Fallback extends Error {}
const FALLBACK = new Fallback('fallback');

/** One Buffer that grows; `fork` / `join` put a length before what was written between them. */
class Writer {
  buf = Buffer.allocUnsafe(256);
  pos = 0;
  private readonly forks: number[] = [];

  ensure(n: number): void {
    if (this.pos + n <= this.buf.length) return;
    let size = this.buf.length * 2;
    while (size < this.pos + n) size *= 2;
    const next = Buffer.allocUnsafe(size);
    this.buf.copy(next, 0, 0, this.pos);
    this.buf = next;
  }

  byte(b: number): void {
    this.ensure(1);
    this.buf[this.pos++] = b;
  }

  varint32(v: number): void {
    this.ensure(5);
    let n = v >>> 0;
    while (n > 0x7f) {
      this.buf[this.pos++] = (n & 0x7f) | 0x80;
      n >>>= 7;
    }
    this.buf[this.pos++] = n;
  }

  /** A 64-bit value's varint (`v` as unsigned 64 bits): two BigInt operations, then 32-bit ones. */
  varint64(v: bigint): void {
    const u = BigInt.asUintN(64, v);
    this.varintLoHi(Number(u & 0xffffffffn), Number(u >> 32n));
  }

  /** sint64's zigzag of `v`, then its varint. */
  zigzag64(v: bigint): void {
    const u = BigInt.asUintN(64, v);
    const lo = Number(u & 0xffffffffn);
    const hi = Number(u >> 32n);
    const sign = (hi | 0) >> 31;
    this.varintLoHi(((lo << 1) ^ sign) >>> 0, (((hi << 1) | (lo >>> 31)) ^ sign) >>> 0);
  }

  /** A negative int32, sign-extended to 64 bits (ten bytes), as toBinary writes it. */
  negative32(v: number): void {
    this.varintLoHi(v >>> 0, 0xffffffff);
  }

  /** The varint of the unsigned 64-bit value `hi` * 2^32 + `lo` (both unsigned 32-bit). */
  private varintLoHi(lo: number, hi: number): void {
    this.ensure(10);
    const buf = this.buf;
    let l = lo;
    let h = hi;
    while (h !== 0 || l > 0x7f) {
      buf[this.pos++] = (l & 0x7f) | 0x80;
      // Shift the 64 bits right by 7: the low 7 bits of `h` move into the top of `l`.
      l = ((l >>> 7) | ((h & 0x7f) << 25)) >>> 0;
      h >>>= 7;
    }
    buf[this.pos++] = l;
  }

  tag(no: number, wireType: number): void {
    this.varint32(((no << 3) | wireType) >>> 0);
  }

  fork(): void {
    this.ensure(1);
    this.forks.push(this.pos);
    this.pos++;
  }

  join(): void {
    const start = this.forks.pop()!;
    const len = this.pos - start - 1;
    const size = len < 0x80 ? 1 : len < 0x4000 ? 2 : len < 0x200000 ? 3 : len < 0x10000000 ? 4 : 5;
    if (size > 1) {
      this.ensure(size - 1);
      this.buf.copyWithin(start + size, start + 1, this.pos);
      this.pos += size - 1;
    }
    let n = len;
    let p = start;
    while (n > 0x7f) {
      this.buf[p++] = (n & 0x7f) | 0x80;
      n >>>= 7;
    }
    this.buf[p] = n;
  }

  string(s: string): void {
    const n = s.length;
    this.ensure(5 + n * 3);
    const buf = this.buf;
    if (n < 0x80) {
      // A short ASCII string (most): its characters are its bytes, and its length one byte.
      let i = 0;
      for (; i < n; i++) {
        const c = s.charCodeAt(i);
        if (c >= 0x80) break;
        buf[this.pos + 1 + i] = c;
      }
      if (i === n) {
        buf[this.pos] = n;
        this.pos += 1 + n;
        return;
      }
    }
    // A lone surrogate is written as U+FFFD's three bytes, as TextEncoder (toBinary's) writes it.
    const len = Buffer.byteLength(s, 'utf8');
    this.varint32(len);
    this.pos += (
      buf as Buffer & { utf8Write(s: string, at: number, max: number): number }
    ).utf8Write(s, this.pos, len);
  }

  bytes(b: Uint8Array): void {
    this.varint32(b.byteLength);
    this.ensure(b.byteLength);
    this.buf.set(b, this.pos);
    this.pos += b.byteLength;
  }
}

type Write = (w: Writer, v: unknown) => void;

const int32 = (v: unknown): number => {
  if (typeof v !== 'number' || (v | 0) !== v) throw FALLBACK;
  return v;
};
const uint32 = (v: unknown): number => {
  if (typeof v !== 'number' || v >>> 0 !== v) throw FALLBACK;
  return v;
};
const int64Of = (v: unknown): bigint => {
  if (typeof v !== 'bigint' || v < INT64_MIN || v > INT64_MAX) throw FALLBACK;
  return v;
};
const uint64Of = (v: unknown): bigint => {
  if (typeof v !== 'bigint' || v < 0n || v > UINT64_MAX) throw FALLBACK;
  return v;
};
/** A 64-bit field held as a string (`jstype = JS_STRING`): decimal digits only, as a bigint. */
const fromDecimal = (v: unknown): bigint => {
  if (typeof v !== 'string' || !/^-?[0-9]+$/.test(v)) throw FALLBACK;
  return BigInt(v);
};

/**
 * Writes a scalar's value (no tag), after checking it is what toBinary takes as is; a 64-bit
 * value held as a string (`longAsString`) is read as its decimal digits.
 */
function scalarWriter(type: ScalarType, longAsString = false): Write {
  const int64 = longAsString ? (v: unknown) => int64Of(fromDecimal(v)) : int64Of;
  const uint64 = longAsString ? (v: unknown) => uint64Of(fromDecimal(v)) : uint64Of;
  switch (type) {
    case ScalarType.STRING:
      return (w, v) => {
        if (typeof v !== 'string') throw FALLBACK;
        w.string(v);
      };
    case ScalarType.BOOL:
      return (w, v) => {
        if (typeof v !== 'boolean') throw FALLBACK;
        w.byte(v ? 1 : 0);
      };
    case ScalarType.INT32:
      return (w, v) => {
        const n = int32(v);
        if (n < 0) w.negative32(n);
        else w.varint32(n);
      };
    case ScalarType.UINT32:
      return (w, v) => w.varint32(uint32(v));
    case ScalarType.SINT32:
      return (w, v) => {
        const n = int32(v);
        w.varint32(((n << 1) ^ (n >> 31)) >>> 0);
      };
    case ScalarType.FIXED32:
      return (w, v) => {
        const n = uint32(v);
        w.ensure(4);
        w.pos = w.buf.writeUInt32LE(n, w.pos);
      };
    case ScalarType.SFIXED32:
      return (w, v) => {
        const n = int32(v);
        w.ensure(4);
        w.pos = w.buf.writeInt32LE(n, w.pos);
      };
    case ScalarType.DOUBLE:
      return (w, v) => {
        if (typeof v !== 'number') throw FALLBACK;
        w.ensure(8);
        w.pos = w.buf.writeDoubleLE(v, w.pos);
      };
    case ScalarType.FLOAT:
      return (w, v) => {
        if (typeof v !== 'number' || (Number.isFinite(v) && Math.abs(v) > FLOAT32_MAX))
          throw FALLBACK;
        w.ensure(4);
        w.pos = w.buf.writeFloatLE(v, w.pos);
      };
    case ScalarType.BYTES:
      return (w, v) => {
        if (!(v instanceof Uint8Array)) throw FALLBACK;
        w.bytes(v);
      };
    case ScalarType.INT64:
      return (w, v) => w.varint64(int64(v));
    case ScalarType.UINT64:
      return (w, v) => w.varint64(uint64(v));
    case ScalarType.SINT64:
      return (w, v) => {
        w.zigzag64(int64(v));
      };
    case ScalarType.FIXED64:
      return (w, v) => {
        const n = uint64(v);
        w.ensure(8);
        w.pos = w.buf.writeBigUInt64LE(n, w.pos);
      };
    default:
      // SFIXED64
      return (w, v) => {
        const n = int64(v);
        w.ensure(8);
        w.pos = w.buf.writeBigInt64LE(n, w.pos);
      };
  }
}

/** Whether a scalar field with implicit presence is at its zero value (toBinary's checks). */
function zeroCheck(type: ScalarType, longAsString = false): (v: unknown) => boolean {
  // toBinary's `value != 0`: a string of zeros is zero too.
  if (longAsString)
    return (v) => v === 0 || v === 0n || (typeof v === 'string' && /^-?0+$/.test(v));
  switch (type) {
    case ScalarType.BOOL:
      return (v) => v === false;
    case ScalarType.STRING:
      return (v) => v === '';
    case ScalarType.BYTES:
      return (v) => v instanceof Uint8Array && v.byteLength === 0;
    case ScalarType.DOUBLE:
    case ScalarType.FLOAT:
      return (v) => Object.is(v, 0);
    default:
      // 0 or 0n (a string "0" is no value this encoder takes: it throws FALLBACK when written).
      return (v) => v === 0 || v === 0n;
  }
}

/** A map key (always a string in protobuf-es) as toBinary converts it for its scalar type. */
function mapKeyOf(type: ScalarType): (key: string) => unknown {
  switch (type) {
    case ScalarType.STRING:
      return (key) => key;
    case ScalarType.BOOL:
      return (key) => {
        if (key === 'true') return true;
        if (key === 'false') return false;
        throw FALLBACK;
      };
    case ScalarType.INT64:
    case ScalarType.SFIXED64:
    case ScalarType.SINT64:
      return (key) => {
        if (!/^-?[0-9]+$/.test(key)) throw FALLBACK;
        return BigInt(key);
      };
    case ScalarType.UINT64:
    case ScalarType.FIXED64:
      return (key) => {
        if (!/^[0-9]+$/.test(key)) throw FALLBACK;
        return BigInt(key);
      };
    default:
      return (key) => {
        // toBinary parses with Number.parseInt; only keys that are the number's own text here.
        const n = Number.parseInt(key, 10);
        if (String(n) !== key) throw FALLBACK;
        return n;
      };
  }
}

interface Compiled {
  ok: boolean;
  typeName: string;
  fields: Write[];
}

const compiled = new WeakMap<DescMessage, Compiled>();

/** protobuf-es's own forms of these well-known types (unwrapped, JSON) are not their wire fields. */
function specialType(desc: DescMessage): boolean {
  const name = desc.typeName;
  return (
    name.startsWith('google.protobuf.') &&
    (name.endsWith('Value') || name === 'google.protobuf.Struct' || name === 'google.protobuf.Any')
  );
}

function compile(desc: DescMessage): Compiled {
  const done = compiled.get(desc);
  if (done) return done;
  const c: Compiled = {
    ok: desc.file.edition === EDITION_PROTO3,
    typeName: desc.typeName,
    fields: [],
  };
  compiled.set(desc, c);
  if (!c.ok) return c;
  const sorted = [...desc.fields].sort((a, b) => a.number - b.number);
  for (const f of sorted) {
    const write = fieldWriter(f);
    if (write === undefined) {
      c.ok = false;
      return c;
    }
    c.fields.push(write);
  }
  return c;
}

/** The writer of one message value (a message or an init object), or undefined when not covered. */
function messageWriter(desc: DescMessage): ((w: Writer, v: unknown) => void) | undefined {
  if (specialType(desc)) return undefined;
  const c = compile(desc);
  // A recursive type is still compiling here: its `ok` is settled before any call.
  return (w, v) => {
    if (!c.ok) throw FALLBACK;
    writeMessage(c, w, v);
  };
}

function writeMessage(c: Compiled, w: Writer, v: unknown): void {
  if (v === null || typeof v !== 'object' || Array.isArray(v)) throw FALLBACK;
  const m = v as Record<string, unknown>;
  const t = m['$typeName'];
  if ((t !== undefined && t !== c.typeName) || m['$unknown'] !== undefined) throw FALLBACK;
  const fields = c.fields;
  for (let i = 0; i < fields.length; i++) fields[i]!(w, m);
}

function fieldWriter(f: DescField): Write | undefined {
  if ((f as { delimitedEncoding?: boolean }).delimitedEncoding) return undefined;
  const name = f.localName;
  const no = f.number;
  switch (f.fieldKind) {
    case 'scalar':
    case 'enum': {
      const type = f.fieldKind === 'enum' ? ScalarType.INT32 : f.scalar;
      if (f.fieldKind === 'enum' && f.enum.values[0]?.number !== 0) return undefined;
      const long = f.fieldKind === 'scalar' && f.longAsString;
      const writeValue = scalarWriter(type, long);
      const wireType = wireTypeOf(type);
      const write: Write = (w, v) => {
        w.tag(no, wireType);
        writeValue(w, v);
      };
      if (f.oneof !== undefined) return oneofWriter(f.oneof, name, write);
      if (f.presence !== IMPLICIT)
        return (w, m) => {
          const v = (m as Record<string, unknown>)[name];
          if (v === undefined) return;
          if (v === null) throw FALLBACK;
          write(w, v);
        };
      const isZero = zeroCheck(type, long);
      return (w, m) => {
        const v = (m as Record<string, unknown>)[name];
        if (v === undefined || isZero(v)) return;
        write(w, v);
      };
    }
    case 'message': {
      const writeChild = messageWriter(f.message);
      if (writeChild === undefined) return undefined;
      const write: Write = (w, v) => {
        w.tag(no, 2);
        w.fork();
        writeChild(w, v);
        w.join();
      };
      if (f.oneof !== undefined) return oneofWriter(f.oneof, name, write);
      return (w, m) => {
        const v = (m as Record<string, unknown>)[name];
        if (v === undefined) return;
        write(w, v);
      };
    }
    case 'list': {
      if (f.listKind === 'message') {
        const writeChild = messageWriter(f.message);
        if (writeChild === undefined) return undefined;
        return (w, m) => {
          const items = listOf((m as Record<string, unknown>)[name]);
          for (let i = 0; i < items.length; i++) {
            w.tag(no, 2);
            w.fork();
            writeChild(w, items[i]);
            w.join();
          }
        };
      }
      const type = f.listKind === 'enum' ? ScalarType.INT32 : f.scalar;
      const writeValue = scalarWriter(type, f.listKind === 'scalar' && f.longAsString);
      if (f.packed)
        return (w, m) => {
          const items = listOf((m as Record<string, unknown>)[name]);
          if (items.length === 0) return;
          w.tag(no, 2);
          w.fork();
          for (let i = 0; i < items.length; i++) writeValue(w, items[i]);
          w.join();
        };
      const wireType = wireTypeOf(type);
      return (w, m) => {
        const items = listOf((m as Record<string, unknown>)[name]);
        for (let i = 0; i < items.length; i++) {
          w.tag(no, wireType);
          writeValue(w, items[i]);
        }
      };
    }
    default: {
      // map
      const keyOf = mapKeyOf(f.mapKey);
      const writeKey = scalarWriter(f.mapKey);
      const keyWireType = wireTypeOf(f.mapKey);
      let writeValue: Write;
      let valueWireType: number;
      if (f.mapKind === 'message') {
        const writeChild = messageWriter(f.message);
        if (writeChild === undefined) return undefined;
        valueWireType = 2;
        writeValue = (w, v) => {
          w.fork();
          writeChild(w, v);
          w.join();
        };
      } else {
        const type = f.mapKind === 'enum' ? ScalarType.INT32 : f.scalar;
        valueWireType = wireTypeOf(type);
        writeValue = scalarWriter(type);
      }
      return (w, m) => {
        const record = (m as Record<string, unknown>)[name];
        if (record === undefined) return;
        if (record === null || typeof record !== 'object' || Array.isArray(record)) throw FALLBACK;
        const r = record as Record<string, unknown>;
        const keys = Object.keys(r);
        for (let i = 0; i < keys.length; i++) {
          const key = keys[i]!;
          const value = r[key];
          if (value === undefined || value === null) throw FALLBACK;
          w.tag(no, 2);
          w.fork();
          w.tag(1, keyWireType);
          writeKey(w, keyOf(key));
          w.tag(2, valueWireType);
          writeValue(w, value);
          w.join();
        }
      };
    }
  }
}

function listOf(v: unknown): readonly unknown[] {
  if (v === undefined) return [];
  if (!Array.isArray(v)) throw FALLBACK;
  return v;
}

/** A oneof member's writer: written (zero values too) when the oneof's case is this field. */
function oneofWriter(oneof: DescOneof, name: string, write: Write): Write {
  const oneofName = oneof.localName;
  return (w, m) => {
    const o = (m as Record<string, unknown>)[oneofName];
    if (o === undefined) return;
    if (o === null || typeof o !== 'object') throw FALLBACK;
    const { case: c, value } = o as { case?: unknown; value?: unknown };
    if (c !== name) return;
    if (value === undefined || value === null) throw FALLBACK;
    write(w, value);
  };
}

/**
 * The encoder of `desc`'s messages, or undefined when `desc` is not covered (see the module's
 * comment). The encoder returns undefined for a value it leaves to toBinary.
 */
export function messageEncoder(
  desc: DescMessage,
): ((value: Record<string, unknown>) => Buffer | undefined) | undefined {
  const write = messageWriter(desc);
  if (write === undefined || !compile(desc).ok) return undefined;
  return (value) => {
    const w = new Writer();
    try {
      write(w, value);
    } catch (err) {
      if (err === FALLBACK) return undefined;
      throw err;
    }
    return w.buf.subarray(0, w.pos);
  };
}
