import type { Readable, Writable } from 'node:stream';

/**
 * A body its producer can hand, chunk by chunk, straight to the writer that sends it on: no stream
 * object in between. It becomes a Readable only when something else wants to read it (a filter
 * buffering it, a plugin piping it). The upstream client's responses are such bodies: a proxied
 * response nobody reads goes from undici's parser to the client's socket with nothing allocated for
 * it but the chunks: undici's Readable body, its pipe and its promise machinery were a large share of
 * the CPU time of a proxied request (bench/README.md).
 */
export interface BodySource {
  /** The body as a stream. Called at most once, and never after `pipeTo` or `discard`. */
  readable(): Readable;
  /**
   * Writes every chunk to `target` with back-pressure and ends it; a failure midway calls
   * `onError` (with `target` as `this`) and destroys `target`. Called at most once.
   */
  pipeTo(target: Writable, onError: (this: Writable, error: Error) => void): void;
  /** Drops the rest of the body, so that its connection can serve another request. */
  discard(): void;
}
