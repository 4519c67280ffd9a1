import * as index from '@grpc/grpc-js';
import { describe, expect, it } from 'vitest';
import { grpcJs, Metadata, status } from './grpc-js.js';

describe('grpc-js in two parts', () => {
  it("gives the index's own Metadata class and status codes", () => {
    expect(Metadata).toBe(index.Metadata);
    expect(status).toBe(index.status);
    expect(status.RESOURCE_EXHAUSTED).toBe(8);
    const md = new index.Metadata();
    expect(md instanceof Metadata).toBe(true);
  });

  it('loads the whole package on demand, once', () => {
    expect(grpcJs().Client).toBe(index.Client);
    expect(grpcJs()).toBe(grpcJs());
  });
});
