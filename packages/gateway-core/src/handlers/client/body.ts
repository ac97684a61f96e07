import { Readable } from 'node:stream';

/**
 * The request body as handed to undici: the client's stream, read only once undici asks for the
 * first chunk, that is once a connection to the upstream exists and the request head is written.
 *
 * Two things follow. A failed connection attempt leaves the client's stream untouched (`started`
 * is false), so the request can be retried with the same body. And undici destroys the body it was
 * given when a request fails; it destroys this wrapper, never the client's stream, which stays
 * paused for the server to drain or close once it has written the 502 — destroying an unfinished
 * incoming request would reset the client's connection before any answer reached it.
 * Chunks are passed on as they are (no copy), with back-pressure both ways.
 */
export class DeferredBody extends Readable {
  readonly #source: Readable;
  #started = false;
  #ended = false;

  constructor(source: Readable) {
    super();
    this.#source = source;
    // The client's failure (its connection reset mid-body) is the exchange's to answer, and undici
    // listens for it only while it sends this body: a failure found when undici first reads, or after
    // it has let go, would otherwise be an 'error' with no listener, which ends the process.
    this.on('error', ignoreError);
  }

  /** True once a byte of the source may have been consumed: a retry can no longer resend it. */
  get started(): boolean {
    return this.#started;
  }

  readonly #onData = (chunk: Buffer | string) => {
    if (!this.push(chunk)) this.#source.pause();
  };

  readonly #onEnd = () => {
    this.#ended = true;
    this.#detach();
    this.push(null);
  };

  // Stays attached after the wrapper is done with the source: an 'error' the client's stream emits
  // later (its connection reset) must not become an uncaught exception.
  readonly #onError = (error: Error) => {
    if (this.destroyed) return;
    this.#detach();
    this.destroy(error);
  };

  // A client that goes away mid-body may close its stream without an error (older Node versions).
  readonly #onClose = () => {
    if (!this.#ended) this.#onError(new Error('the request body ended before it was complete'));
  };

  override _read(): void {
    if (!this.#started) {
      this.#started = true;
      const source = this.#source;
      source.on('error', this.#onError);
      if (source.errored) {
        this.destroy(source.errored);
        return;
      }
      if (source.readableEnded) {
        this.#ended = true;
        this.push(null);
        return;
      }
      source.on('data', this.#onData).on('end', this.#onEnd).on('close', this.#onClose);
    }
    this.#source.resume();
  }

  override _destroy(error: Error | null, callback: (error?: Error | null) => void): void {
    if (this.#started && !this.#ended) {
      this.#detach();
      this.#source.pause();
    }
    callback(error);
  }

  #detach(): void {
    this.#source.off('data', this.#onData).off('end', this.#onEnd).off('close', this.#onClose);
  }
}

function ignoreError(): void {}
