/** Time as the service reads it: the system's, or a test's. */
export interface Clock {
  now(): number;
  /** Runs `run` after `ms`; the timer never keeps the process alive. */
  setTimeout(run: () => void, ms: number): unknown;
  clearTimeout(timer: unknown): void;
}

export const SYSTEM_CLOCK: Clock = {
  now: () => Date.now(),
  setTimeout(run, ms) {
    const timer = setTimeout(run, ms);
    timer.unref();
    return timer;
  },
  clearTimeout: (timer) => clearTimeout(timer as NodeJS.Timeout),
};

/**
 * Says a recurring problem at most once a `periodMs` (a minute): the first time at once, later ones
 * when the period has passed, with how many happened since it was last said.
 */
export class RateLimitedLog {
  readonly #clock: Clock;
  readonly #periodMs: number;
  readonly #say: (count: number) => void;
  #last = Number.NEGATIVE_INFINITY;
  #unsaid = 0;

  constructor(clock: Clock, say: (count: number) => void, periodMs = 60_000) {
    this.#clock = clock;
    this.#say = say;
    this.#periodMs = periodMs;
  }

  note(count = 1): void {
    this.#unsaid += count;
    const now = this.#clock.now();
    if (now - this.#last < this.#periodMs) return;
    this.#last = now;
    const count_ = this.#unsaid;
    this.#unsaid = 0;
    this.#say(count_);
  }
}
