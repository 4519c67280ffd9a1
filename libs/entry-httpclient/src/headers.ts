import type { CallHeaders } from '@svcboot/entry-core';

/** An outbound request's fetch `Headers` as the chain's headers. */
export class RequestHeaders implements CallHeaders {
  constructor(readonly headers: Headers) {}
  get(name: string): string | undefined {
    return this.headers.get(name) ?? undefined;
  }
  set(name: string, value: string): void {
    this.headers.set(name, value);
  }
}
