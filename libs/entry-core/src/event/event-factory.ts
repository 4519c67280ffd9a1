import { randomUUID } from 'node:crypto';
import { Event } from './event.js';
import type { EventScope } from './encode.js';
import type { EventLogger } from './event-logger.js';

/** Makes and writes the records of one entry. */
export class EventFactory {
  constructor(
    private readonly logger: EventLogger,
    readonly scope: EventScope,
    /** Called before a record is written (e.g. the app naming dependencies down on a failed call). */
    private readonly beforeWrite?: (event: Event) => void,
  ) {}

  /**
   * A record that began at `startMs` (wall clock) / `startHr` (process.hrtime.bigint), now by
   * default; `eventId` defaults to a new UUID.
   */
  /** The same scope and hooks, writing to `logger` (e.g. the logging middleware's own outputs). */
  withLogger(logger: EventLogger): EventFactory {
    return new EventFactory(logger, this.scope, this.beforeWrite);
  }

  begin(
    operation: string,
    eventId: string = randomUUID(),
    startMs?: number,
    startHr?: bigint,
  ): Event {
    const e = new Event(operation, startMs, startHr);
    e.eventId = eventId;
    return e;
  }

  write(event: Event): void {
    this.beforeWrite?.(event);
    this.logger.write(event, this.scope);
  }
}
