import { SvcError } from '@svcboot/entry-core';
import { describe, expect, it } from 'vitest';
import { BROWSER_PROTOCOLS_PACKAGE, loadBrowserProtocols } from './browser-protocols.js';

describe('the browser protocols package, loaded when boot.yaml turns one on', () => {
  it('loads @svcboot/grpc-browser: gRPC-Web and Connect over the invoker', async () => {
    const browser = await loadBrowserProtocols('grpc[greeter]', 'connect');
    expect(BROWSER_PROTOCOLS_PACKAGE).toBe('@svcboot/grpc-browser');
    expect(typeof browser.grpcWeb).toBe('function');
    expect(typeof browser.connect).toBe('function');
  });

  it('not installed: a stable code, the package and the npm install command', async () => {
    const missing = '@svcboot/grpc-browser-not-installed';
    const err = await loadBrowserProtocols('grpc[greeter]', 'grpcWeb', missing).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(err).toBeInstanceOf(SvcError);
    expect((err as SvcError).code).toBe('SVC_GRPC_PROTOCOL_NOT_INSTALLED');
    expect((err as SvcError).message).toContain(
      `grpc[greeter].grpcWeb: grpcWeb is provided by ${missing}, which is not installed: run \`npm install ${missing}\``,
    );
  });
});
