import { Readable, type Writable } from 'node:stream';
import type { Dispatcher } from 'undici';
import { offAbort, onAbort } from '../../context/abort-slot.ts';
import type { BodySource } from '../../http/body-source.ts';
import { isChunkedOnly } from '../../http/connection-headers.ts';
import type { IdleWatch, Watched } from './idle-watch.ts';
import { BodyTimeoutError, HeadersTimeoutError } from './undici-dispatchers.ts';

/** What the upstream answered, once its head has arrived. */
export interface UpstreamHead {
  statusCode: number;
  statusText: string;
  /** `[name, value, ...]` with the upstream's spelling. */
  rawHeaders: string[];
  /** The body, to be sent on or read (an empty one still ends). */
  body: UpstreamExchange;
}

/**
 * Interim (1xx) answers taken before the response. Each is activity for the silence clock (a long
 * operation may send `102 Processing` to keep its request alive), so an upstream sending 103s back to
 * back kept a core busy and its request open for as long as the client waited.
 */
export const MAX_INTERIM_RESPONSES = 1000;

/** Counts an interim answer; past MAX_INTERIM_RESPONSES, the exchange is aborted. Returns the count. */
export function countInterim(count: number, controller: Dispatcher.DispatchController): number {
  if (++count > MAX_INTERIM_RESPONSES)
    controller.abort(
      new Error(`the upstream sent more than ${MAX_INTERIM_RESPONSES} interim (1xx) responses`),
    );
  return count;
}

/** Anything but HTAB, space and visible ASCII. */
const NOT_PLAIN_REASON = /[^\t\x20-\x7e]/;
/**
 * The control characters but HTAB, never valid in a status line (RFC 9112 §4); said by what they
 * are not, as biome refuses them in a class.
 */
const CONTROL = /[^\t\x20-\x7e\x80-\uffff]/;

/**
 * Why an upstream's final response cannot be relayed, or undefined; the exchange then fails as an
 * invalid upstream response (PORTICO_E_UPSTREAM, 502), the upstream's fault rather than a 500 of the
 * gateway's when the head is written. undici's parser takes any three digits, any reason phrase
 * without CR or LF, and transfer codings it does not decode (it only de-chunks).
 * - A status outside 100-599 (RFC 9110 §15) has no meaning a client can be given.
 * - A control character in the reason phrase makes the status line invalid (RFC 9112 §4), as one in
 *   a field value does (undici refuses those itself).
 * - A transfer coding other than chunked (`Transfer-Encoding: gzip, chunked`) leaves the body still
 *   coded once de-chunked; RFC 9112 §7 forbids removing a coding without decoding it, and the
 *   response writer frames bodies itself (Transfer-Encoding never passes through), so the coding
 *   would be lost and the client handed gzip bytes as the content.
 */
export function unrelayableHead(
  statusCode: number,
  headers: Record<string, string | string[] | undefined> | undefined,
  reason: string | undefined,
): Error | undefined {
  if (statusCode < 100 || statusCode > 599)
    return new Error(`the upstream answered with status ${statusCode}, outside 100-599`);
  if (reason === undefined) return new Error('the upstream’s reason phrase holds a control character');
  const codings = headers?.['transfer-encoding'];
  if (codings !== undefined && !isChunkedOnly(codings))
    return new Error(
      `the upstream’s response has the transfer coding ${JSON.stringify(String(codings))}, which the gateway does not decode`,
    );
  return undefined;
}

/**
 * The reason phrase as relayed, or undefined when it holds a control character (an invalid status
 * line: unrelayableHead). undici reads it as UTF-8, so one beyond ASCII (obs-text, a Latin-1 or UTF-8
 * phrase) cannot be written back as it came; it is left out (''), and the writer puts the status's
 * standard phrase in its place (a client ignores the phrase: RFC 9112 §4). A plain phrase, nearly
 * every one, is read once.
 */
export function relayedReason(statusText: string | undefined): string | undefined {
  if (statusText === undefined || !NOT_PLAIN_REASON.test(statusText)) return statusText ?? '';
  return CONTROL.test(statusText) ? undefined : '';
}

/** Bytes kept for a body nobody takes yet before the upstream connection is paused. */
const QUEUE_BYTES = 64 * 1024;

/**
 * One request to an upstream through undici's `dispatch`, and the body of its response as a
 * BodySource. Against `Dispatcher.request`, nothing per request but this object: no Readable for
 * the body until someone reads it, no piping, no async resource; the client's abort reaches undici
 * through this object as the signal's listener (`handleEvent`, in the signal's slot when the
 * gateway owns it: context/abort-slot.ts), with no closure either.
 * Chunks that arrive before the body is taken (a small body comes with the head) are queued, up to
 * QUEUE_BYTES before the connection is paused. With an IdleWatch, an upstream silent for longer than
 * its limit (waiting for the head, or between two chunks of the body) fails the exchange with
 * undici's own timeout errors.
 */
export class UpstreamExchange implements Dispatcher.DispatchHandler, BodySource, Watched {
  readonly #signal: AbortSignal;
  readonly #idle: IdleWatch | undefined;
  lastActive = 0;
  watchPrevious: Watched | null = null;
  watchNext: Watched | null = null;
  #resolve: (head: UpstreamHead) => void;
  #reject: (error: Error) => void;
  #controller: Dispatcher.DispatchController | null = null;
  #headed = false;
  #queue: Buffer[] = [];
  #queued = 0;
  #ended = false;
  #error: Error | null = null;
  #readable: Readable | null = null;
  #target: Writable | null = null;
  #onError: ((this: Writable, error: Error) => void) | null = null;
  #discarding = false;
  #resumer: (() => void) | undefined;
  #interim = 0;

  /** Resolves with the head, or rejects with why no head came (the caller may retry). */
  readonly head: Promise<UpstreamHead>;

  constructor(signal: AbortSignal, idle?: IdleWatch) {
    this.#signal = signal;
    this.#idle = idle;
    let resolve!: (head: UpstreamHead) => void;
    let reject!: (error: Error) => void;
    this.head = new Promise<UpstreamHead>((yes, no) => {
      resolve = yes;
      reject = no;
    });
    this.#resolve = resolve;
    this.#reject = reject;
    onAbort(signal, this);
  }

  /** The client went away: the upstream exchange is aborted (undici then calls onResponseError). */
  handleEvent(): void {
    this.#controller?.abort(this.#signal.reason ?? new Error('aborted'));
  }

  /** Dispatching threw before undici took the request. */
  failed(error: Error): void {
    this.#settle();
    this.#reject(error);
  }

  onRequestStart(controller: Dispatcher.DispatchController): void {
    this.#controller = controller;
    if (this.#signal.aborted) controller.abort(this.#signal.reason ?? new Error('aborted'));
    else this.#idle?.watch(this);
  }

  /** The upstream said nothing for too long (the IdleWatch has let go of this exchange already). */
  idleTimeout(): void {
    this.#controller?.abort(
      this.#headed
        ? new BodyTimeoutError('Body Timeout Error')
        : new HeadersTimeoutError('Headers Timeout Error'),
    );
  }

  onResponseStart(
    controller: Dispatcher.DispatchController,
    statusCode: number,
    headers: Record<string, string | string[] | undefined> | undefined,
    statusText?: string,
  ): void {
    if (this.#idle !== undefined) this.lastActive = this.#idle.now;
    // 1xx answers (102 Processing, 103 Early Hints) are not the response.
    if (statusCode < 200 && statusCode >= 100) {
      this.#interim = countInterim(this.#interim, controller);
      return;
    }
    const reason = relayedReason(statusText);
    const invalid = unrelayableHead(statusCode, headers, reason);
    if (invalid !== undefined) {
      // undici calls onResponseError, which rejects the head: a 502, the connection not reused.
      controller.abort(invalid);
      return;
    }
    this.#headed = true;
    this.#resolve({
      statusCode,
      statusText: reason!,
      rawHeaders: rawStrings(controller.rawHeaders),
      body: this,
    });
  }

  onResponseData(controller: Dispatcher.DispatchController, chunk: Buffer): void {
    if (this.#idle !== undefined) this.lastActive = this.#idle.now;
    if (this.#target !== null) {
      if (!this.#target.write(chunk)) {
        controller.pause();
        this.#target.once('drain', this.#resume);
      }
    } else if (this.#readable !== null) {
      if (!this.#readable.push(chunk)) controller.pause();
    } else if (!this.#discarding) {
      this.#queue.push(chunk);
      this.#queued += chunk.length;
      if (this.#queued >= QUEUE_BYTES) controller.pause();
    }
  }

  onResponseEnd(): void {
    this.#ended = true;
    this.#settle();
    if (this.#target !== null) this.#target.end();
    else if (this.#readable !== null) this.#readable.push(null);
  }

  onResponseError(_controller: Dispatcher.DispatchController, error: Error): void {
    this.#settle();
    if (!this.#headed) {
      this.#reject(error);
      return;
    }
    this.#error = error;
    this.#queue = [];
    if (this.#target !== null) {
      this.#onError?.call(this.#target, error);
      this.#target.destroy();
    } else if (this.#readable !== null) {
      // As undici's own body does: a reader that listens for no 'error' still sees the stream end
      // destroyed, and the process does not fail on an unhandled 'error'.
      this.#readable.on('error', ignore).destroy(error);
    }
  }

  readable(): Readable {
    const readable = new Readable({
      read: this.#resume,
      // Destroyed before its end (a reader that gives up: a body too large to read whole): the
      // rest will not be read, so the upstream exchange is aborted and its connection freed.
      destroy: (error, callback) => {
        if (!this.#ended && this.#error === null)
          this.#controller?.abort(error ?? new Error('the response body was let go of unread'));
        callback(error);
      },
    });
    this.#readable = readable;
    for (const chunk of this.#takeQueue()) readable.push(chunk);
    if (this.#error !== null) readable.on('error', ignore).destroy(this.#error);
    else if (this.#ended) readable.push(null);
    return readable;
  }

  pipeTo(target: Writable, onError: (this: Writable, error: Error) => void): void {
    if (this.#error !== null) {
      onError.call(target, this.#error);
      target.destroy();
      return;
    }
    const queue = this.#takeQueue();
    if (this.#ended) {
      // Usually the whole body came with the head: one write for head and body.
      if (queue.length === 1) target.end(queue[0]);
      else {
        for (const chunk of queue) target.write(chunk);
        target.end();
      }
      return;
    }
    this.#target = target;
    this.#onError = onError;
    let open = true;
    for (const chunk of queue) open = target.write(chunk) && open;
    if (!open) target.once('drain', this.#resume);
    else this.#resumeUpstream();
  }

  discard(): void {
    this.#discarding = true;
    this.#queue = [];
    this.#queued = 0;
    if (!this.#ended) this.#resumeUpstream();
  }

  #takeQueue(): Buffer[] {
    const queue = this.#queue;
    this.#queue = [];
    this.#queued = 0;
    return queue;
  }

  /** Resumes the upstream connection; one function per exchange, made the first time it is needed. */
  get #resume(): () => void {
    this.#resumer ??= () => this.#resumeUpstream();
    return this.#resumer;
  }

  /**
   * While a paused body waits for its reader the silence clock runs on, as with undici's own body
   * timeout (a reader that never comes frees the upstream connection); resuming starts it again.
   */
  #resumeUpstream(): void {
    if (this.#idle !== undefined) this.lastActive = this.#idle.now;
    this.#controller?.resume();
  }

  #settle(): void {
    offAbort(this.#signal, this);
    this.#idle?.unwatch(this);
  }
}

function ignore(): void {}

/** undici's raw header list as strings (names are tokens; values are read as Latin-1, as on the wire). */
export function rawStrings(raw: Dispatcher.DispatchController['rawHeaders']): string[] {
  if (!Array.isArray(raw)) return [];
  const out = new Array<string>(raw.length);
  for (let i = 0; i < raw.length; i++) {
    const value = raw[i]!;
    out[i] = typeof value === 'string' ? value : value.toString('latin1');
  }
  return out;
}
