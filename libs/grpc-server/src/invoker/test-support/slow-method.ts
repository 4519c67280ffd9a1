/**
 * A client-streaming method whose handler reads nothing until `release()`, then counts what it
 * read (`messages:bytes`): the back-pressure tests of every adapter over the method invoker.
 * Its messages are their bytes.
 */
import type { RegisteredMethod } from '../../services.js';
import type { ReadableHandlerCall } from '../handler-call.js';

export interface Slow {
  call?: ReadableHandlerCall;
  release(): void;
}

const identity = (b: Buffer): Buffer => b;
const asBytes = (v: unknown): Buffer => v as Buffer;

export function slowMethod(slow: Slow): RegisteredMethod {
  let open: () => void = () => undefined;
  const gate = new Promise<void>((resolve) => (open = resolve));
  slow.release = () => open();
  return {
    path: '/t.T/Slow',
    service: 't.T',
    name: 'Slow',
    definition: {
      path: '/t.T/Slow',
      requestStream: true,
      responseStream: false,
      requestSerialize: asBytes,
      requestDeserialize: identity,
      responseSerialize: asBytes,
      responseDeserialize: identity,
    },
    handler: ((
      call: ReadableHandlerCall,
      callback: (err: Error | null, value?: Buffer) => void,
    ) => {
      slow.call = call;
      void gate.then(async () => {
        let messages = 0;
        let bytes = 0;
        for await (const m of call as AsyncIterable<Buffer>) {
          messages++;
          bytes += m.length;
        }
        callback(null, Buffer.from(`${messages}:${bytes}`));
      });
    }) as unknown as RegisteredMethod['handler'],
  };
}
