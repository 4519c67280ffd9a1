import { randomUUID } from 'node:crypto';
import { Event } from './event.js';
import type { EventScope } from './encode.js';
import type { EventLogger } from './event-logger.js';

/** Makes and writes the records of one entry. */
export class EventFactory {
  constructor(
    private readonly logger: EventLogger,
    readonly scope: EventScope,
  ) {}

  /** A record that has begun now; `eventId` defaults to a new UUID. */
  begin(operation: string, eventId: string = randomUUID()): Event {
    const e = new Event(operation);
    e.eventId = eventId;
    return e;
  }

  write(event: Event): void {
    this.logger.write(event, this.scope);
  }
}
