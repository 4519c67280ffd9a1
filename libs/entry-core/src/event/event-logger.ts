import { encodeConsole, encodeJson, type EventEncoding, type EventScope } from './encode.js';
import type { Event } from './event.js';
import type { Output } from './output.js';

/** Writes event records in one encoding to one or more outputs. */
export class EventLogger {
  private readonly encode: (e: Event, scope: EventScope) => string;

  constructor(
    readonly encoding: EventEncoding,
    private readonly outputs: readonly Output[],
  ) {
    this.encode = encoding === 'json' ? encodeJson : encodeConsole;
  }

  write(event: Event, scope: EventScope): void {
    const text = this.encode(event, scope);
    for (let i = 0; i < this.outputs.length; i++) this.outputs[i]!.write(text);
  }
}
