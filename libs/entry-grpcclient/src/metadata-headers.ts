import type { Metadata } from '@grpc/grpc-js';
import type { CallHeaders } from '@svcboot/entry-core';

/** An outbound call's grpc-js metadata as the chain's headers (names lowercased, as gRPC keys are). */
export class MetadataHeaders implements CallHeaders {
  constructor(private readonly md: Metadata) {}
  get(name: string): string | undefined {
    const v = this.md.get(name)[0];
    return typeof v === 'string' ? v : undefined;
  }
  set(name: string, value: string): void {
    this.md.set(name.toLowerCase(), value);
  }
}
