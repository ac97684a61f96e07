import { createWriteStream, mkdirSync, type WriteStream } from 'node:fs';
import path from 'node:path';
import { s } from '../config/schema-builders.ts';
import { ErrorCode, PorticoError } from '../errors.ts';
import type { HeapView } from '../heap/heap-view.ts';
import { defineHeaplet } from '../heap/heaplet.ts';
import { TemporaryStorage } from '../http/temporary-storage.ts';
import { isLogSink, LOG_LEVELS, type LogLevel, type LogRecord, type LogSink } from '../log-sinks.ts';
import { consoleLogger, type Logger } from '../logging.ts';

/**
 * Log sinks: where decorators (capture, timer) and other audit or performance records go, apart
 * from the gateway's own log. A heap object named `LogSink` is the default one (spec, implicit
 * properties); a declaration's `"logSink": "<name>"` picks another for that object.
 */

/** `<ISO timestamp> (<LEVEL>) <source> <message>`: one record, as every sink writes it. */
export function formatLogRecord(record: LogRecord): string {
  const when = new Date(record.timestamp ?? Date.now()).toISOString();
  return `${when} (${record.level}) ${record.source} ${record.message}`;
}

/** The settings the incumbents' log sinks accept; WARNING is WARN, ALL is TRACE, OFF writes nothing. */
const LEVEL_SETTING = ['TRACE', 'DEBUG', 'INFO', 'STAT', 'WARNING', 'WARN', 'ERROR', 'ALL', 'OFF'] as const;
type LevelSetting = (typeof LEVEL_SETTING)[number];
const levelSchema = s.enumOf(LEVEL_SETTING).default('INFO');

function thresholdOf(setting: LevelSetting): number {
  if (setting === 'OFF') return Number.POSITIVE_INFINITY;
  if (setting === 'ALL') return 0;
  return LOG_LEVELS.indexOf(setting === 'WARNING' ? 'WARN' : setting);
}

/** Reports a sink's first failure on the gateway log; later ones are dropped silently. */
class FailureReport {
  #reported = false;
  readonly #logger: Logger;
  readonly #what: string;

  constructor(logger: Logger, what: string) {
    this.#logger = logger;
    this.#what = what;
  }

  report(error: unknown): void {
    if (this.#reported) return;
    this.#reported = true;
    try {
      this.#logger.error(`${this.#what} cannot write; later failures are not reported`, {
        error: String(error),
      });
    } catch {
      // Nothing is left to report to.
    }
  }
}

/**
 * Writes records through the gateway's own log, so that `--log-format` and the process's output
 * apply to them as to every other line: TRACE and DEBUG as debug, INFO and STAT as info.
 */
export class ConsoleLogSink implements LogSink {
  readonly #logger: Logger;
  readonly #threshold: number;
  readonly #failure: FailureReport;

  constructor(logger: Logger, level: LevelSetting = 'INFO', name = 'LogSink') {
    this.#logger = logger;
    this.#threshold = thresholdOf(level);
    // The logger itself may be what fails: the report goes to standard error.
    this.#failure = new FailureReport(consoleLogger, `log sink '${name}'`);
  }

  isLoggable(level: LogLevel): boolean {
    return LOG_LEVELS.indexOf(level) >= this.#threshold;
  }

  log(record: LogRecord): void {
    if (!this.isLoggable(record.level)) return;
    try {
      const line = formatLogRecord(record);
      if (record.level === 'ERROR') this.#logger.error(line);
      else if (record.level === 'WARN') this.#logger.warn(line);
      else if (record.level === 'TRACE' || record.level === 'DEBUG') this.#logger.debug(line);
      else this.#logger.info(line);
    } catch (error) {
      this.#failure.report(error);
    }
  }
}

export interface FileLogSinkOptions {
  /** The file records outside any route go to (and every record, without `perRoute`). */
  file: string;
  /** Records of a request a route took go to `route-<route id>.log` beside `file`. */
  perRoute: boolean;
  level?: LevelSetting;
  encoding?: BufferEncoding;
  /** Where the first failure is reported. */
  logger: Logger;
  name?: string;
}

/**
 * Appends records to a file, or to one file per route as the incumbents' per-route logs do. Files
 * are opened on first use; a file that cannot be written is reported once, its records dropped, and
 * it is opened again for the next record (a directory created later, a disk freed).
 */
export class FileLogSink implements LogSink {
  readonly #options: FileLogSinkOptions;
  readonly #threshold: number;
  readonly #streams = new Map<string, WriteStream>();
  readonly #failure: FailureReport;

  constructor(options: FileLogSinkOptions) {
    this.#options = options;
    this.#threshold = thresholdOf(options.level ?? 'INFO');
    this.#failure = new FailureReport(options.logger, `log sink '${options.name ?? 'FileLogSink'}'`);
  }

  isLoggable(level: LogLevel): boolean {
    return LOG_LEVELS.indexOf(level) >= this.#threshold;
  }

  /** The file a record goes to. */
  fileFor(routeId: string | undefined): string {
    const { file, perRoute } = this.#options;
    if (!perRoute || routeId === undefined) return file;
    // A route ID is a file name already; anything that could leave the directory is replaced.
    return path.join(path.dirname(file), `route-${routeId.replace(/[^\w.-]/g, '_')}.log`);
  }

  log(record: LogRecord): void {
    if (!this.isLoggable(record.level)) return;
    const stream = this.#streamFor(this.fileFor(record.routeId));
    if (stream === undefined) return;
    try {
      stream.write(`${formatLogRecord(record)}\n`, this.#options.encoding ?? 'utf8');
    } catch (error) {
      this.#failure.report(error);
    }
  }

  /** Flushes and closes every file. */
  async close(): Promise<void> {
    const streams = [...this.#streams.values()];
    this.#streams.clear();
    await Promise.all(streams.map((stream) => new Promise<void>((resolve) => stream.end(() => resolve()))));
  }

  #streamFor(file: string): WriteStream | undefined {
    const open = this.#streams.get(file);
    if (open !== undefined) return open;
    try {
      mkdirSync(path.dirname(file), { recursive: true });
      const stream = createWriteStream(file, { flags: 'a' });
      stream.on('error', (error) => {
        this.#failure.report(error);
        if (this.#streams.get(file) === stream) this.#streams.delete(file);
        stream.destroy();
      });
      this.#streams.set(file, stream);
      return stream;
    } catch (error) {
      this.#failure.report(error);
      return undefined;
    }
  }
}

/**
 * The log sink a decorated object writes to: the one its declaration names, else the one config.json's
 * `logSink` names, else the heap object `LogSink` in scope, else (a heap without the gateway's defaults) a console sink on the heap's log.
 */
export async function resolveLogSink(heap: HeapView, name?: string): Promise<LogSink> {
  if (name === undefined && !heap.has(heap.logSinkName)) return new ConsoleLogSink(heap.logger);
  const wanted = name ?? heap.logSinkName;
  const sink = await heap.get(wanted, 'object');
  if (!isLogSink(sink)) {
    throw new PorticoError(ErrorCode.REFERENCE, `'${wanted}' is not a log sink`, {
      expected: 'the name of a ConsoleLogSink or FileLogSink',
    });
  }
  return sink;
}

/** The default `LogSink`: records on the gateway's log, from the level given on. */
export const ConsoleLogSinkHeaplet = defineHeaplet({
  type: 'ConsoleLogSink',
  kind: 'object',
  config: s.object({
    level: levelSchema,
    // Accepted for the incumbents' files: the gateway's log decides where its lines go.
    stream: s.enumOf(['ERR', 'OUT', 'AUTO'] as const).default('AUTO'),
  }),
  create: ({ name, config, logger }): LogSink => new ConsoleLogSink(logger, config.level, name),
});

const ENCODINGS = ['utf8', 'utf-8', 'latin1', 'iso-8859-1', 'ascii', 'us-ascii', 'utf16le', 'utf-16le'];

/** Records appended to a file, or to one file per route. */
export const FileLogSinkHeaplet = defineHeaplet({
  type: 'FileLogSink',
  kind: 'object',
  config: s.object({
    file: s.string().default('logs/route-system.log'),
    perRoute: s.boolean().default(false),
    level: levelSchema,
    charset: s
      .string()
      .default('UTF-8')
      .refine(
        (charset) =>
          ENCODINGS.includes(charset.toLowerCase()) ? undefined : `the charset ${charset} is not supported`,
        `one of UTF-8, ISO-8859-1, US-ASCII, UTF-16LE`,
      ),
  }),
  create: ({ name, config, logger, environment, onDestroy }): FileLogSink => {
    const sink = new FileLogSink({
      file: path.resolve(environment.baseDirectory, config.file),
      perRoute: config.perRoute,
      level: config.level,
      encoding: encodingOf(config.charset),
      logger,
      name,
    });
    onDestroy(() => sink.close());
    return sink;
  },
});

function encodingOf(charset: string): BufferEncoding {
  const lower = charset.toLowerCase();
  if (lower === 'iso-8859-1' || lower === 'latin1') return 'latin1';
  if (lower === 'us-ascii' || lower === 'ascii') return 'ascii';
  if (lower.startsWith('utf-16') || lower === 'utf16le') return 'utf16le';
  return 'utf8';
}

/** Where buffered bodies go; the settings the incumbents accept, used by the entity buffering. */
export const TemporaryStorageHeaplet = defineHeaplet({
  type: 'TemporaryStorage',
  kind: 'object',
  config: s.object({
    initialLength: s.integer({ min: 0 }).default(8 * 1024),
    memoryLimit: s.integer({ min: 0 }).default(64 * 1024),
    fileLimit: s.integer({ min: 0 }).default(1024 * 1024 * 1024),
    directory: s.string().optional(),
  }),
  create: ({ config, environment }) =>
    new TemporaryStorage({
      memoryLimit: config.memoryLimit,
      fileLimit: config.fileLimit,
      directory: config.directory ?? environment.temporaryDirectory,
    }),
});
