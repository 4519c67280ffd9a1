import type { IncomingMessage } from 'node:http';
import type { Socket } from 'node:net';
import { plainPeer } from '@svcboot/entry-core/call';

/** Thrown for a request the gateway rejects before the handler: carries the gRPC code and HTTP status. */
export class GatewayRejection extends Error {
  constructor(
    readonly code: number,
    message: string,
    readonly httpStatus: number,
  ) {
    super(message);
  }
}

/** A form body, as Go's ParseForm recognises one (media type, parameters allowed). */
export function isForm(req: IncomingMessage): boolean {
  const ct = req.headers['content-type'];
  if (ct === undefined) return false;
  const semi = ct.indexOf(';');
  return (
    (semi < 0 ? ct : ct.slice(0, semi)).trim().toLowerCase() === 'application/x-www-form-urlencoded'
  );
}

export function readBody(req: IncomingMessage, limit: number): Promise<Buffer> {
  const declared = Number(req.headers['content-length'] ?? -1);
  if (declared > limit)
    return Promise.reject(
      new GatewayRejection(
        8,
        `request body of ${declared} bytes exceeds the limit of ${limit} bytes`,
        413,
      ),
    );
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    req.on('data', (c: Buffer) => {
      size += c.length;
      if (size > limit) {
        req.removeAllListeners('data');
        req.resume();
        reject(new GatewayRejection(8, `request body exceeds the limit of ${limit} bytes`, 413));
        return;
      }
      chunks.push(c);
    });
    req.once('end', () => resolve(chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks)));
    req.once('error', reject);
  });
}

/** Where a connection's `ip:port` is kept once worked out: keep-alive connections carry many calls. */
const PEER = Symbol('svcboot.gateway.peer');

export function peerOf(socket: Socket): string {
  const s = socket as Socket & { [PEER]?: string };
  let peer = s[PEER];
  if (peer === undefined) {
    const address = socket.remoteAddress;
    peer = plainPeer(`${address ?? ''}:${socket.remotePort ?? ''}`);
    if (address !== undefined) s[PEER] = peer;
  }
  return peer;
}
