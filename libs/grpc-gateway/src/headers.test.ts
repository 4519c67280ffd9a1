import { Metadata } from '@grpc/grpc-js';
import { describe, expect, it } from 'vitest';
import { GatewayHeaders, addMetadataHeaders, headerListError, putHeader } from './headers.js';

describe('gateway response header lists', () => {
  it('puts a header once: a name already there in any case gets the new value', () => {
    const out: string[] = [];
    putHeader(out, 'X-Request-Id', 'a');
    putHeader(out, 'Content-Type', 'text/plain');
    putHeader(out, 'x-request-ID', 'b');
    putHeader(out, 'content-type', 'application/json');
    // Same length, differing only outside A-Z: different names.
    putHeader(out, 'X-Request-I^', 'c');
    putHeader(out, 'X-Request-I~', 'd');
    expect(out).toEqual([
      'X-Request-Id',
      'b',
      'Content-Type',
      'application/json',
      'X-Request-I^',
      'c',
      'X-Request-I~',
      'd',
    ]);
  });

  it('collects the middleware headers with the style prefix and reads request headers case-insensitively', () => {
    const h = new GatewayHeaders(
      { 'x-request-id': 'r1', accept: ['a', 'b'] } as never,
      'Grpc-Metadata-',
    );
    expect(h.get('X-Request-Id')).toBe('r1');
    expect(h.get('Accept')).toBe('a');
    expect(h.get('missing')).toBeUndefined();
    h.set('X-Request-Id', 'r1');
    h.set('X-Svc-App-Name', 'app');
    h.set('x-request-id', 'r2');
    expect(h.out).toEqual([
      'Grpc-Metadata-X-Request-Id',
      'r2',
      'Grpc-Metadata-X-Svc-App-Name',
      'app',
    ]);
  });

  it('adds metadata as headers: plain in svc style, else Grpc-Metadata- or Grpc-Trailer-, every value a line, binary values left out', () => {
    const md = new Metadata();
    md.set('x-one', '1');
    md.add('x-many', 'first');
    md.add('x-many', 'second');
    md.set('x-blob-bin', Buffer.from('b'));
    const svc: string[] = ['X-One', 'old'];
    addMetadataHeaders(svc, md, true, false);
    expect(svc).toEqual(['X-One', '1', 'x-many', 'first', 'x-many', 'second']);
    const initial: string[] = [];
    addMetadataHeaders(initial, md, false, false);
    expect(initial).toEqual([
      'Grpc-Metadata-x-one',
      '1',
      'Grpc-Metadata-x-many',
      'first',
      'Grpc-Metadata-x-many',
      'second',
    ]);
    const trailer: string[] = [];
    addMetadataHeaders(trailer, md, false, true);
    expect(trailer).toEqual([
      'Grpc-Trailer-x-one',
      '1',
      'Grpc-Trailer-x-many',
      'first',
      'Grpc-Trailer-x-many',
      'second',
    ]);
  });

  it('leaves hop-by-hop keys, content-length and content-type out of the headers, in both styles', () => {
    const md = new Metadata();
    const dropped = [
      'connection',
      'keep-alive',
      'proxy-authenticate',
      'proxy-authorization',
      'te',
      'trailer',
      'transfer-encoding',
      'upgrade',
      'proxy-connection',
      'content-length',
      'content-type',
    ];
    for (const k of dropped) md.set(k, 'x');
    md.set('x-kept', 'yes');
    md.set('content-language', 'fr');
    const svc: string[] = ['Content-Length', '12'];
    addMetadataHeaders(svc, md, true, false);
    expect(svc).toEqual(['Content-Length', '12', 'x-kept', 'yes', 'content-language', 'fr']);
    const initial: string[] = [];
    addMetadataHeaders(initial, md, false, false);
    expect(initial).toEqual([
      'Grpc-Metadata-x-kept',
      'yes',
      'Grpc-Metadata-content-language',
      'fr',
    ]);
    const trailer: string[] = [];
    addMetadataHeaders(trailer, md, false, true);
    expect(trailer).toEqual(['Grpc-Trailer-x-kept', 'yes', 'Grpc-Trailer-content-language', 'fr']);
  });

  it("finds the header Node's writeHead would refuse, naming it", () => {
    expect(headerListError([], true)).toBeUndefined();
    expect(
      headerListError(
        ['X-Ok', '1', 'Content-Type', 'application/json', 'X-Latin', 'caf\u00e9', 'X-Tab', 'a\tb'],
        true,
      ),
    ).toBeUndefined();
    const badValue = headerListError(['X-Ok', '1', 'X-Bad', 'line\nbreak'], true);
    expect(badValue).toBeInstanceOf(Error);
    expect(badValue!.message).toContain('X-Bad');
    expect(headerListError(['X-Ok', '1', 'Bad Name', 'v'], true)!.message).toContain('Bad Name');
    expect(headerListError(['X-Ok', '1', 'X-Emoji', '\u{1F389}'], true)!.message).toContain(
      'X-Emoji',
    );
    expect(headerListError(['', 'v'], true)).toBeInstanceOf(Error);
    expect(headerListError(['X-Odd'], false)).toBeInstanceOf(Error);
    // Trailers only with a chunked body.
    expect(headerListError(['TRAILER', 'x-late'], false)).toBeUndefined();
    expect(headerListError(['TRAILER', 'x-late'], true)!.message).toContain('TRAILER');
  });

  it('refuses a bad value at the place where a good one passed before, and past the remembered places', () => {
    const fine = ['X-A', 'same', 'X-B', 'v1', 'X-C', 'fixed'];
    for (let i = 0; i < 3; i++) expect(headerListError(fine, true)).toBeUndefined();
    // The same values again pass; a changed one at any place is checked.
    expect(headerListError(['X-A', 'same', 'X-B', 'v2', 'X-C', 'fixed'], true)).toBeUndefined();
    expect(
      headerListError(['X-A', 'same', 'X-B', 'v\r\n2', 'X-C', 'fixed'], true)!.message,
    ).toContain('X-B');
    // A good value that passed at one place does not vouch for a bad one moved there from elsewhere.
    expect(headerListError(['X-A', 'bad\n', 'X-B', 'same'], true)!.message).toContain('X-A');
    // The value of a list that was refused is not remembered as passed.
    expect(headerListError(['X-A', 'same', 'X-B', 'v\u0000', 'X-C', 'fixed'], true)).toBeInstanceOf(
      Error,
    );
    expect(headerListError(['X-A', 'same', 'X-B', 'v\u0000'], true)).toBeInstanceOf(Error);
    // An odd list ends in undefined at a place no value passed; far places are always checked.
    expect(headerListError(['X-A', 'same', 'X-Odd'], false)).toBeInstanceOf(Error);
    const long: string[] = [];
    for (let i = 0; i < 40; i++) long.push(`X-H${i}`, `v${i}`);
    expect(headerListError(long, true)).toBeUndefined();
    expect(headerListError(long, true)).toBeUndefined();
    const badFar = [...long];
    badFar[79] = 'v39\n';
    expect(headerListError(badFar, true)!.message).toContain('X-H39');
    const badNear = [...long];
    badNear[3] = 'v1\n';
    expect(headerListError(badNear, true)!.message).toContain('X-H1');
  });
});
