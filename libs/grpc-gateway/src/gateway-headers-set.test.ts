import { describe, expect, it } from 'vitest';
import { GatewayHeaders, putHeader } from './headers.js';

describe('GatewayHeaders.set', () => {
  it('appends new names and replaces a name already there, in any case, wherever it came from', () => {
    const h = new GatewayHeaders({}, '');
    h.set('X-Request-Id', 'a');
    h.set('X-Svc-App-Unix-Time', 't1');
    h.set('X-Svc-Received-Time', 't2');
    // Appended by the gateway itself, past set's bookkeeping.
    putHeader(h.out, 'Content-Type', 'application/json');
    h.out.push('X-Later', 'l');
    h.set('x-request-id', 'b');
    h.set('X-SVC-RECEIVED-TIME', 't3');
    h.set('content-type', 'text/plain');
    h.set('x-later', 'm');
    h.set('X-Other', 'o');
    expect(h.out).toEqual([
      'X-Request-Id',
      'b',
      'X-Svc-App-Unix-Time',
      't1',
      'X-Svc-Received-Time',
      't3',
      'Content-Type',
      'text/plain',
      'X-Later',
      'm',
      'X-Other',
      'o',
    ]);
  });

  it('prefixes names in the grpc-gateway style', () => {
    const h = new GatewayHeaders({}, 'Grpc-Metadata-');
    h.set('X-Request-Id', 'a');
    h.set('x-request-id', 'b');
    h.setHttp('X-Request-Id', 'c');
    expect(h.out).toEqual(['Grpc-Metadata-X-Request-Id', 'b', 'X-Request-Id', 'c']);
  });

  it('tells long names apart (every length from 31 on shares one bit)', () => {
    const h = new GatewayHeaders({}, '');
    const long = `X-${'a'.repeat(40)}`;
    h.set(long, '1');
    h.set(`X-${'b'.repeat(50)}`, '2');
    h.set(long.toUpperCase(), '3');
    expect(h.out).toEqual([long, '3', `X-${'b'.repeat(50)}`, '2']);
  });
});
