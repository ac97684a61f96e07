/** An exchange whose upstream may stay silent for a bounded time. */
export interface Watched {
  /** The watch's clock when the upstream last did something (set by the watch and the exchange). */
  lastActive: number;
  /** The watch's list links; only the watch writes them. */
  watchPrevious: Watched | null;
  watchNext: Watched | null;
  /** The upstream stayed silent too long: the watch has already let go of this exchange. */
  idleTimeout(): void;
}

/** The clock's resolution: an eighth of the limit, between 10 ms and half a second. */
function tickFor(timeoutMs: number): number {
  return Math.min(500, Math.max(10, Math.ceil(timeoutMs / 8)));
}

/**
 * The upstream silence limit (soTimeout) of the exchanges of one client handler, on one coarse clock
 * rather than a timer per request. undici's own headersTimeout/bodyTimeout make a timer object per
 * request that undici keeps until its next timer tick (0.5 to 1 s later), so under load every
 * request left about 50 bytes for the old generation to collect (bench/README.md, "What survives a
 * scavenge"). Here the exchange writes one number when the upstream does something, and the
 * exchanges are linked through their own fields: nothing is allocated per request.
 *
 * Not a Set: a Set under this churn reallocates its table as it grows and shrinks, and a table that
 * was promoted before it was replaced still points at exchanges, which then survive every scavenge
 * until the next mark-compact (bench/README.md, "Garbage collection"). For the same
 * reason an exchange let go of forgets its neighbours.
 *
 * An exchange silent for `timeoutMs` is told so between `timeoutMs` and `timeoutMs` plus two ticks
 * after the upstream's last activity. The clock runs only while something is watched, and never
 * keeps the process alive.
 */
export class IdleWatch {
  #head: Watched | null = null;
  #size = 0;
  readonly #tickMs: number;
  /** Ticks of silence past which an exchange is timed out. */
  readonly #limit: number;
  #timer: NodeJS.Timeout | undefined;
  #ticks = 0;

  constructor(timeoutMs: number) {
    this.#tickMs = tickFor(timeoutMs);
    this.#limit = Math.ceil(timeoutMs / this.#tickMs);
  }

  /** The clock, for `lastActive`. */
  get now(): number {
    return this.#ticks;
  }

  /** How many exchanges are watched (for tests). */
  get size(): number {
    return this.#size;
  }

  watch(item: Watched): void {
    item.lastActive = this.#ticks;
    item.watchPrevious = null;
    item.watchNext = this.#head;
    if (this.#head !== null) this.#head.watchPrevious = item;
    this.#head = item;
    this.#size++;
    if (this.#timer === undefined) {
      this.#timer = setInterval(this.#tick, this.#tickMs);
      this.#timer.unref();
    }
  }

  /** Lets go of an exchange; one not watched (any more) is left as it is. */
  unwatch(item: Watched): void {
    const { watchPrevious: previous, watchNext: next } = item;
    if (previous === null && this.#head !== item) return;
    if (previous === null) this.#head = next;
    else previous.watchNext = next;
    if (next !== null) next.watchPrevious = previous;
    item.watchPrevious = null;
    item.watchNext = null;
    this.#size--;
  }

  readonly #tick = (): void => {
    this.#ticks++;
    if (this.#head === null) {
      clearInterval(this.#timer);
      this.#timer = undefined;
      return;
    }
    for (let item: Watched | null = this.#head; item !== null; ) {
      const next: Watched | null = item.watchNext;
      if (this.#ticks - item.lastActive > this.#limit) {
        this.unwatch(item);
        item.idleTimeout();
      }
      item = next;
    }
  };
}
