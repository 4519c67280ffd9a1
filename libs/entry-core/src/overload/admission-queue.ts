import type { CallContext } from '../middleware/call.js';
import type { CallRejection } from '../middleware/rejection.js';

/** A call waiting for its turn to run. */
export interface Waiting {
  readonly call: CallContext;
  readonly resolve: () => void;
  readonly reject: (err: CallRejection) => void;
  /** When it began to wait (the clock's `now()` ms). */
  readonly queuedMs: number;
  /** The gap between releases (ms) its admission estimated its wait on. */
  readonly gapMs: number;
  /** The turn of the loop it was queued in (TurnClock's `ended` then). */
  readonly turn: number;
}

/** A FIFO of waiting calls (an array and a head index, compacted as it empties). */
export class Fifo {
  private items: Array<Waiting | undefined> = [];
  private head = 0;

  get length(): number {
    return this.items.length - this.head;
  }

  /** The call first in line, left in place. */
  peek(): Waiting | undefined {
    return this.items[this.head];
  }

  push(w: Waiting): void {
    this.items.push(w);
  }

  shift(): Waiting | undefined {
    if (this.head >= this.items.length) return undefined;
    const w = this.items[this.head];
    this.items[this.head++] = undefined;
    if (this.head === this.items.length) {
      this.items.length = 0;
      this.head = 0;
    } else if (this.head > 1024 && this.head * 2 > this.items.length) {
      this.items = this.items.slice(this.head);
      this.head = 0;
    }
    return w;
  }

  /** The call last in line, left in place. */
  peekLast(): Waiting | undefined {
    return this.head < this.items.length ? this.items[this.items.length - 1] : undefined;
  }

  /** The call last in line, taken out. */
  pop(): Waiting | undefined {
    if (this.head >= this.items.length) return undefined;
    const w = this.items.pop();
    if (this.head === this.items.length) {
      this.items.length = 0;
      this.head = 0;
    }
    return w;
  }

  /** Empties the queue, returning what waited (for the entry's close). */
  drain(): Waiting[] {
    const out = this.items.slice(this.head).filter((w): w is Waiting => w !== undefined);
    this.items = [];
    this.head = 0;
    return out;
  }
}
