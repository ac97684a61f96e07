import { createWriteStream, type WriteStream } from 'node:fs';
import path from 'node:path';
import {
  bindingsFor,
  type Context,
  defineHeaplet,
  type Filter,
  type Handler,
  type Logger,
  type LogSink,
  type Request,
  type Response,
  resolveLogSink,
  s,
} from '@portico/gateway-core';
import { type Condition, conditionReadsEntity, holdsSettled } from '@portico/gateway-core/conditions';
import { charsetEncoder, charsetSetting } from '@portico/gateway-core/http-helpers';
import {
  Capture,
  type CapturePoint,
  capturedFilter,
  DEFAULT_MASKED_HEADERS,
  namePattern,
} from './capture-decorator.ts';

/** What a CaptureFilter captures: the request as it arrives, the response as it goes back. */
const POINTS: ReadonlySet<CapturePoint> = new Set<CapturePoint>(['request', 'response']);

/** A filter that changes nothing: what the capture wraps. */
const PASS_THROUGH: Filter = { filter: (context, request, next) => next.handle(context, request) };

/**
 * The log sink of a CaptureFilter's `file`: appends each record as a line (time, source, message)
 * in the file's charset. The file is opened when the first record comes, so that a configuration
 * that loads and captures nothing leaves no file; a file that cannot be written is reported once and
 * its records dropped, as every sink does.
 */
class CaptureFileSink implements LogSink {
  readonly #file: string;
  readonly #encode: (text: string) => Buffer;
  readonly #logger: Logger;
  #stream: WriteStream | undefined;
  #failed = false;

  constructor(file: string, encode: (text: string) => Buffer, logger: Logger) {
    this.#file = file;
    this.#encode = encode;
    this.#logger = logger;
  }

  isLoggable(): boolean {
    return !this.#failed;
  }

  log(record: Parameters<LogSink['log']>[0]): void {
    if (this.#failed) return;
    if (this.#stream === undefined) {
      this.#stream = createWriteStream(this.#file, { flags: 'a' });
      this.#stream.on('error', (error) => {
        this.#failed = true;
        this.#logger.error('the capture file cannot be written; captures are dropped', {
          file: this.#file,
          error: error.message,
        });
      });
    }
    const time = new Date(record.timestamp ?? Date.now()).toISOString();
    this.#stream.write(this.#encode(`${time} ${record.source} ${record.message}\n`));
  }

  close(): Promise<void> {
    const stream = this.#stream;
    if (stream === undefined || stream.destroyed) return Promise.resolve();
    return new Promise((resolve) => stream.end(resolve));
  }
}

/**
 * CaptureFilter is OpenIG 3's capture, kept so that its configurations load: a filter that writes
 * the request it gets and the response that comes back, as CaptureDecorator writes them for a
 * decorated object (`"capture": ["request", "response"]`), credentials masked. With `file`, to that
 * file; otherwise to the filter's log sink. A `condition` limits it to the requests it holds for.
 */
export class CaptureFilter implements Filter {
  readonly #captured: Filter;
  readonly #condition: Condition | undefined;
  readonly #readsBody: boolean;

  constructor(capture: Capture, condition: Condition | undefined) {
    this.#captured = capturedFilter(PASS_THROUGH, new Set(POINTS), capture);
    this.#condition = condition;
    this.#readsBody = condition !== undefined && conditionReadsEntity(condition, 'request');
  }

  async filter(context: Context, request: Request, next: Handler): Promise<Response> {
    if (this.#condition !== undefined) {
      if (this.#readsBody) await request.entity.bytes();
      let held = holdsSettled(this.#condition, bindingsFor(context, request));
      if (held instanceof Promise) held = await held;
      if (!held) return next.handle(context, request);
    }
    return this.#captured.filter(context, request, next);
  }
}

export const CaptureFilterHeaplet = defineHeaplet({
  type: 'CaptureFilter',
  kind: 'filter',
  config: s.object({
    // Where captures go: a file (relative to the instance directory), else the log sink.
    file: s.string().optional(),
    charset: charsetSetting(),
    condition: s.condition().optional(),
    captureEntity: s.boolean().default(true),
    // OpenIG 3's name for writing the exchange's context too.
    captureExchange: s.boolean().default(false),
    maxEntityLength: s.integer({ min: 0 }).default(512 * 1024),
  }),
  create: async ({ config, environment, heap, logger, logSink, name, onDestroy }) => {
    let sink: LogSink;
    if (config.file !== undefined) {
      const file = path.resolve(environment.baseDirectory, config.file);
      // The charset is checked by its schema: an encoder exists for it.
      const fileSink = new CaptureFileSink(file, charsetEncoder(config.charset)!, logger);
      onDestroy(() => fileSink.close());
      sink = fileSink;
    } else {
      sink = await resolveLogSink(heap, logSink);
    }
    const capture = new Capture(sink, `@Capture[${name}]`, {
      logSink: sink,
      captureEntity: config.captureEntity,
      captureContext: config.captureExchange,
      maxEntityLength: config.maxEntityLength,
      masks: { headers: DEFAULT_MASKED_HEADERS.map(namePattern), attributes: [], mask: '*****' },
    });
    return new CaptureFilter(capture, config.condition);
  },
});
