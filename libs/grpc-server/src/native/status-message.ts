/**
 * `grpc-message` on the wire: the status message as UTF-8, with every byte outside the printable
 * ASCII range (0x20–0x7E) and `%` itself written as `%XX` (gRPC's PROTOCOL-HTTP2.md). Clients decode
 * it with percent-decoding; grpc-js's server used `encodeURI`, which encodes more than needed and
 * decodes the same.
 */
export function encodeStatusMessage(message: string): string {
  let plain = true;
  for (let i = 0; i < message.length; i++) {
    const c = message.charCodeAt(i);
    if (c < 0x20 || c > 0x7e || c === 0x25) {
      plain = false;
      break;
    }
  }
  if (plain) return message;
  let out = '';
  for (const byte of Buffer.from(message, 'utf8')) {
    if (byte < 0x20 || byte > 0x7e || byte === 0x25) {
      out += `%${byte < 16 ? '0' : ''}${byte.toString(16).toUpperCase()}`;
    } else {
      out += String.fromCharCode(byte);
    }
  }
  return out;
}

const HEX2 = /^[0-9a-fA-F]{2}$/;

/** The reverse of encodeStatusMessage; a malformed escape is kept as it is (as the spec asks). */
export function decodeStatusMessage(value: string): string {
  if (!value.includes('%')) return value;
  const bytes: number[] = [];
  for (let i = 0; i < value.length; i++) {
    const c = value.charCodeAt(i);
    if (c === 0x25 && HEX2.test(value.slice(i + 1, i + 3))) {
      bytes.push(Number.parseInt(value.slice(i + 1, i + 3), 16));
      i += 2;
    } else {
      bytes.push(c & 0xff);
    }
  }
  return Buffer.from(bytes).toString('utf8');
}
