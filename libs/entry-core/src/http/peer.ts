/**
 * A peer address as every transport records it (`CallInfo.remoteAddr`, the record's
 * `remoteAddr`, a span's `network.peer.address`): an IPv4 client of a dual-stack listener, which
 * Node reports in its IPv4-mapped IPv6 form (`::ffff:127.0.0.1`), in its IPv4 form
 * (`127.0.0.1`); any other address as is. Works on an address alone or `address:port`.
 */
export function plainPeer(peer: string): string {
  return peer.startsWith('::ffff:') ? peer.slice(7) : peer;
}

/** A connection's peer as `address:port` (see plainPeer). */
export function socketPeer(socket: { remoteAddress?: string; remotePort?: number }): string {
  return `${plainPeer(socket.remoteAddress ?? '')}:${socket.remotePort ?? ''}`;
}
