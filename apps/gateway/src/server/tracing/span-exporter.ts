import http from 'node:http';
import https from 'node:https';
import type { Logger } from '@portico/gateway-core';
import type { SpanSink, TraceSpan } from './span.ts';

/** A batch of spans being encoded (OTLP JSON or protobuf), its body once sealed. */
export interface SpanBatch {
  readonly spans: number;
  add(span: TraceSpan, endedAt: number): void;
  seal(): Buffer;
  /** The buffer it was written into, reused for a later batch. */
  readonly storage: Buffer;
}

/** What makes the batches of one encoding, and says its content type. */
export interface BatchEnvelope {
  readonly contentType: string;
  batch(spans: number, storage?: Buffer): SpanBatch;
}

export interface ExporterOptions {
  /** The collector's OTLP/HTTP traces URL. */
  endpoint: string;
  envelope: BatchEnvelope;
  logger: Logger;
  /** Spans per export request (OpenTelemetry's batch processor's default). */
  maxBatch?: number;
  /** Spans waiting to be exported beyond which new ones are dropped (the batch processor's default). */
  maxQueued?: number;
  /** The longest an ended span waits for its batch to be sent, in milliseconds. */
  delayMs?: number;
  /** The longest one export may take, its retries included, in milliseconds. */
  timeoutMs?: number;
}

/** Answers after which an export is tried again (OTLP/HTTP's retryable statuses). */
const RETRYABLE = new Set([429, 502, 503, 504]);
const MAX_ATTEMPTS = 5;
/** Buffers kept for reuse: one batch fills while one is exported, one more for a slow export. */
const MAX_SPARE = 2;
/** Failures are logged at most this often. */
const LOG_EVERY_MS = 60_000;

/**
 * Ended spans gathered into batches and sent to the collector over OTLP/HTTP (protobuf or JSON), one export at
 * a time, as OpenTelemetry's batch span processor and OTLP exporter do: a batch goes when it is
 * full or `delayMs` after its first span; spans beyond `maxQueued` waiting are dropped (counted);
 * an export answered 429/502/503/504, or not answered, is retried with backoff within `timeoutMs`.
 * Each span is encoded into its batch's buffer when it ends, so no span outlives its request.
 */
export class SpanExporter implements SpanSink {
  readonly #url: URL;
  readonly #envelope: BatchEnvelope;
  readonly #logger: Logger;
  readonly #maxBatch: number;
  readonly #maxQueued: number;
  readonly #timeoutMs: number;
  readonly #agent: http.Agent;
  readonly #flusher: NodeJS.Timeout;
  #batch: SpanBatch;
  readonly #waiting: SpanBatch[] = [];
  /**
   * Buffers of batches exported, reused for the next ones: a new 320 KB buffer per batch was 20 MB/s
   * of memory outside V8's heap under load, which V8 answers with mark-compacts (8 in 5 s).
   */
  readonly #spare: Buffer[] = [];
  #waitingSpans = 0;
  #sending: Promise<void> | undefined;
  #closing = false;
  #loggedAt = Number.NEGATIVE_INFINITY;
  /** Spans sent and acknowledged, dropped for want of room, and lost in failed exports. */
  readonly counts = { exported: 0, dropped: 0, failed: 0 };

  constructor(options: ExporterOptions) {
    this.#url = new URL(options.endpoint);
    this.#envelope = options.envelope;
    this.#logger = options.logger;
    this.#maxBatch = options.maxBatch ?? 512;
    this.#maxQueued = options.maxQueued ?? 2048;
    this.#timeoutMs = options.timeoutMs ?? 10_000;
    this.#batch = this.#envelope.batch(this.#maxBatch);
    const Agent = this.#url.protocol === 'https:' ? https.Agent : http.Agent;
    this.#agent = new Agent({ keepAlive: true, maxSockets: 1 });
    this.#flusher = setInterval(() => this.#seal(), options.delayMs ?? 1000).unref();
  }

  ended(span: TraceSpan, endedAt: number): void {
    if (this.#closing || this.#waitingSpans + this.#batch.spans >= this.#maxQueued) {
      this.counts.dropped++;
      this.#warn('spans were dropped: the export queue is full', {});
      return;
    }
    this.#batch.add(span, endedAt);
    if (this.#batch.spans >= this.#maxBatch) this.#seal();
  }

  /** Sends what is gathered and waits for every export under way (each bounded by `timeoutMs`); no retries from now on. */
  async shutdown(): Promise<void> {
    this.#seal();
    this.#closing = true;
    clearInterval(this.#flusher);
    while (this.#sending !== undefined) await this.#sending;
    this.#agent.destroy();
  }

  #seal(): void {
    if (this.#batch.spans === 0) return;
    this.#waiting.push(this.#batch);
    this.#waitingSpans += this.#batch.spans;
    this.#batch = this.#envelope.batch(this.#maxBatch, this.#spare.pop());
    this.#pump();
  }

  #pump(): void {
    if (this.#sending !== undefined) return;
    const batch = this.#waiting.shift();
    if (batch === undefined) return;
    this.#waitingSpans -= batch.spans;
    this.#sending = this.#export(batch).finally(() => {
      if (this.#spare.length < MAX_SPARE) this.#spare.push(batch.storage);
      this.#sending = undefined;
      this.#pump();
    });
  }

  async #export(batch: SpanBatch): Promise<void> {
    const body = batch.seal();
    const deadline = Date.now() + this.#timeoutMs;
    let last = '';
    for (let attempt = 1; ; attempt++) {
      const left = deadline - Date.now();
      try {
        const { status, retryAfter } = await this.#post(body, left);
        if (status >= 200 && status < 300) {
          this.counts.exported += batch.spans;
          return;
        }
        last = `the collector answered ${status}`;
        if (!RETRYABLE.has(status)) break;
        if (!(await this.#backOff(attempt, deadline, retryAfter))) break;
      } catch (error) {
        last = (error as Error).message;
        if (!(await this.#backOff(attempt, deadline, undefined))) break;
      }
    }
    this.counts.failed += batch.spans;
    this.#warn('spans could not be exported', {
      error: last,
      spans: batch.spans,
      endpoint: this.#url.origin,
    });
  }

  /** Waits before another attempt, if one is allowed: OTLP's exponential backoff with jitter, or the collector's Retry-After. */
  async #backOff(attempt: number, deadline: number, retryAfter: string | undefined): Promise<boolean> {
    if (this.#closing || attempt >= MAX_ATTEMPTS) return false;
    const asked = retryAfter === undefined ? Number.NaN : Number(retryAfter) * 1000;
    const delay = Number.isFinite(asked)
      ? asked
      : Math.min(5000, 1000 * 1.5 ** (attempt - 1)) * (0.8 + Math.random() * 0.4);
    if (Date.now() + delay >= deadline) return false;
    await new Promise((resolve) => setTimeout(resolve, delay).unref());
    return true;
  }

  #post(body: Buffer, timeoutMs: number): Promise<{ status: number; retryAfter: string | undefined }> {
    const request = this.#url.protocol === 'https:' ? https.request : http.request;
    return new Promise((resolve, reject) => {
      const req = request(
        this.#url,
        {
          method: 'POST',
          agent: this.#agent,
          timeout: Math.max(1, timeoutMs),
          headers: { 'Content-Type': this.#envelope.contentType, 'Content-Length': body.length },
        },
        (res) => {
          res.resume();
          res.on('error', reject);
          res.on('end', () => {
            const retryAfter = res.headers['retry-after'];
            resolve({ status: res.statusCode ?? 0, retryAfter });
          });
        },
      );
      req.on('timeout', () => req.destroy(new Error(`no answer within ${timeoutMs} ms`)));
      req.on('error', reject);
      req.end(body);
    });
  }

  #warn(message: string, fields: Record<string, unknown>): void {
    const now = Date.now();
    if (now - this.#loggedAt < LOG_EVERY_MS) return;
    this.#loggedAt = now;
    this.#logger.warn(message, { ...fields, ...this.counts });
  }
}
