import { createSocket, type RemoteInfo, type Socket } from 'node:dgram';

/**
 * A small authoritative DNS server on UDP (RFC 1035), for the tests of `dns://<server>/name`
 * targets: it answers A queries for the names it holds with their current addresses (TTL 0),
 * AAAA queries with no record, and NXDOMAIN for other names. `set` changes a name's addresses;
 * `queries` counts the A queries answered, by name.
 */
export class DnsServer {
  private readonly records = new Map<string, string[]>();
  readonly queries = new Map<string, number>();
  private constructor(
    private readonly socket: Socket,
    readonly port: number,
  ) {
    socket.on('message', (msg, peer) => this.answer(msg, peer));
  }

  static async start(): Promise<DnsServer> {
    const socket = createSocket('udp4');
    await new Promise<void>((resolve) => socket.bind(0, '127.0.0.1', resolve));
    return new DnsServer(socket, socket.address().port);
  }

  set(name: string, addresses: string[]): void {
    this.records.set(name.toLowerCase(), addresses);
  }

  close(): Promise<void> {
    return new Promise((resolve) => this.socket.close(() => resolve()));
  }

  private answer(query: Buffer, peer: RemoteInfo): void {
    if (query.length < 12) return;
    // The question: labels up to a zero byte, then QTYPE and QCLASS.
    const labels: string[] = [];
    let at = 12;
    while (at < query.length && query[at] !== 0) {
      const len = query[at]!;
      labels.push(query.subarray(at + 1, at + 1 + len).toString('ascii'));
      at += 1 + len;
    }
    const questionEnd = at + 5;
    if (questionEnd > query.length) return;
    const qtype = query.readUInt16BE(at + 1);
    const name = labels.join('.').toLowerCase();
    const addresses = this.records.get(name);
    const answers = addresses !== undefined && qtype === 1 ? addresses : [];
    if (qtype === 1 && addresses !== undefined)
      this.queries.set(name, (this.queries.get(name) ?? 0) + 1);
    const header = Buffer.alloc(12);
    query.copy(header, 0, 0, 2); // the id
    // QR, opcode 0, AA, RD as asked, RA; RCODE 3 (NXDOMAIN) for a name it does not hold.
    header.writeUInt16BE(0x8480 | ((query[2]! & 0x01) << 8) | (addresses === undefined ? 3 : 0), 2);
    header.writeUInt16BE(1, 4);
    header.writeUInt16BE(answers.length, 6);
    const records = answers.map((ip) => {
      const rr = Buffer.alloc(16);
      rr.writeUInt16BE(0xc00c, 0); // the name: a pointer to the question's
      rr.writeUInt16BE(1, 2); // A
      rr.writeUInt16BE(1, 4); // IN
      rr.writeUInt32BE(0, 6); // TTL 0: resolve again each time
      rr.writeUInt16BE(4, 10);
      Buffer.from(ip.split('.').map(Number)).copy(rr, 12);
      return rr;
    });
    const reply = Buffer.concat([header, query.subarray(12, questionEnd), ...records]);
    this.socket.send(reply, peer.port, peer.address);
  }
}
