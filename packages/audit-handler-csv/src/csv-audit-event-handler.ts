import { createHash } from 'node:crypto';
import { mkdirSync, readFileSync } from 'node:fs';
import { EOL } from 'node:os';
import path from 'node:path';
import { Duration, defineHeaplet, ErrorCode, type Logger, PorticoError, s } from '@portico/gateway-core';
import {
  ACCESS_TOPIC_SCHEMA,
  type AuditEvent,
  type AuditEventHandler,
  type AuditQuery,
  auditHandler,
  auditHandlerConfig,
  evaluable,
  type JsonSchema,
  matchesQueryFilter,
  topicFields,
} from '@portico/gateway-core/audit';
import { KeyStoreErrorCode, keystorePath, WrongPasswordError } from '@portico/keystore';
import type { CsvFormat } from './csv-format.ts';
import { type CsvWriter, PlainCsvWriter, type Scheduler, SecureCsvWriter } from './csv-writer.ts';
import { DatePattern, DatePatternError, DEFAULT_SUFFIX } from './date-pattern.ts';
import { type Clock, LogFile, type RetentionPolicy, type RotationPolicy } from './log-file.ts';
import { readEvents } from './read-back.ts';
import { readTamperEvidenceKeys, type TamperEvidenceKeys } from './tamper-evidence.ts';

const oneCharacter = () =>
  s
    .string()
    .refine(
      (text) => ([...text].length === 1 ? undefined : `'${text}' is not one character`),
      'one character',
    );

/** Neither zero nor unlimited: a rotation or signature interval of either would never end or never begin. */
const interval = () =>
  s
    .duration()
    .refine(
      (duration) =>
        duration.isZero
          ? 'the interval is zero'
          : duration.isUnlimited
            ? 'the interval is unlimited'
            : duration.toMillis() < 1
              ? 'the interval is under a millisecond'
              : undefined,
      'a duration of at least 1 millisecond, neither zero nor unlimited',
    );

const FORMATTING = s.object({
  quoteChar: oneCharacter().default('"'),
  delimiterChar: oneCharacter().default(','),
  endOfLineSymbols: s
    .string()
    .refine((text) => (text.length > 0 ? undefined : 'the end of line is empty'), 'one or more characters')
    .default(EOL),
});

const BUFFERING = s.object({
  enabled: s.boolean().default(false),
  autoFlush: s.boolean().default(true),
});

const SECURITY = s
  .object({
    enabled: s.boolean().default(false),
    filename: s.string().optional(),
    password: s.string().optional(),
    signatureInterval: interval().optional(),
  })
  .refine(
    (security) => {
      if (!security.enabled) return undefined;
      const missing = (['filename', 'password', 'signatureInterval'] as const).find(
        (k) => security[k] === undefined,
      );
      return missing === undefined ? undefined : `the setting is required when security is enabled`;
    },
    'the keystore filename, its password and the signature interval, when security is enabled',
    (security) =>
      (['filename', 'password', 'signatureInterval'] as const).find((k) => security[k] === undefined),
  );

const FILE_ROTATION = s.object({
  rotationEnabled: s.boolean().default(false),
  maxFileSize: s.integer().default(0),
  rotationFilePrefix: s.string().default(''),
  rotationFileSuffix: s.string().default(DEFAULT_SUFFIX),
  rotationInterval: interval().optional(),
  rotationTimes: evaluable(s.array(s.duration())).default([]),
});

const FILE_RETENTION = s.object({
  maxNumberOfHistoryFiles: s.integer().default(0),
  maxDiskSpaceToUse: s.integer().default(0),
  minFreeSpaceRequired: s.integer().default(0),
});

const CSV_HANDLER_CONFIG = auditHandlerConfig({
  logDirectory: s.string(),
  formatting: FORMATTING.optional(),
  buffering: BUFFERING.optional(),
  security: SECURITY.optional(),
  fileRotation: FILE_ROTATION.optional(),
  fileRetention: FILE_RETENTION.optional(),
  rotationRetentionCheckInterval: interval().default(() => Duration.ofSeconds(5)),
});

/** The handler's settings once read, defaults applied. */
export interface CsvHandlerSettings {
  name: string;
  enabled: boolean;
  topics: readonly string[];
  /** An absolute path. */
  logDirectory: string;
  format: CsvFormat;
  buffering: { enabled: boolean; autoFlush: boolean };
  security: { signatureInterval: number; keys: TamperEvidenceKeys } | undefined;
  /** Undefined when rotation is not enabled. */
  rotation: RotationPolicy | undefined;
  retention: RetentionPolicy;
  /** Milliseconds between rotation and retention checks. */
  checkInterval: number;
}

/** What tests give a handler instead of the wall clock and timers. */
export interface HandlerClocks {
  clock?: Clock;
  /** For signature rows. */
  schedule?: Scheduler;
  /** Whether to run the periodic check on a timer (tests call `check` themselves). */
  timers?: boolean;
  /** Whether this process is one of several gateway workers; `node:cluster` says by default. */
  isClusterWorker?: boolean;
}

/**
 * CsvAuditEventHandler writes each event of the `access` topic as one row of
 * `<logDirectory>/access.csv` (`tamper-evident-access.csv` when `security` is enabled), with the
 * columns and formatting of the incumbents' files: tools that read theirs read ours, and
 * `portico audit verify` checks a tamper-evident one. The file rotates and history files are pruned
 * as `fileRotation` and `fileRetention` say.
 *
 * Unbuffered (the default), each event's row is written (one write to the file) before the next is
 * formatted. Buffered, rows are gathered and written at the end of each batch (`autoFlush`, the
 * default) or when 64 KiB are waiting, at each periodic check, at `flush` and at `close`.
 */
export class CsvAuditEventHandler {
  readonly settings: CsvHandlerSettings;
  readonly #logger: Logger;
  readonly #clocks: HandlerClocks;
  #lease: SharedWriter | undefined;
  #schema: JsonSchema = ACCESS_TOPIC_SCHEMA;
  #timer: NodeJS.Timeout | undefined;
  /** The `_id`s of a batch that failed part way: written already, skipped when it comes again. */
  #written: Set<string> | undefined;
  #closed = false;

  constructor(settings: CsvHandlerSettings, logger: Logger, clocks: HandlerClocks = {}) {
    this.settings = settings;
    this.#logger = logger;
    this.#clocks = clocks;
  }

  /** The file events are written to. */
  get file(): string {
    const name = this.settings.security ? 'tamper-evident-access.csv' : 'access.csv';
    return path.join(this.settings.logDirectory, name);
  }

  /**
   * Opens (or resumes) the file, its columns laid out by the topic's schema. Handlers of one file in
   * this process share its writer (below).
   */
  start(topics?: ReadonlyMap<string, JsonSchema>): void {
    if (this.#lease !== undefined || this.#closed) return;
    this.#schema = topics?.get('access') ?? ACCESS_TOPIC_SCHEMA;
    const { settings } = this;
    this.#checkProcesses();
    mkdirSync(settings.logDirectory, { recursive: true });
    const columns = topicFields(this.#schema);
    this.#lease = openShared(this.file, fingerprint(settings, columns), () => this.#newWriter(columns), this);
    const periodic =
      settings.rotation !== undefined || (settings.buffering.enabled && !settings.buffering.autoFlush);
    if (periodic && this.#clocks.timers !== false) {
      this.#timer = setInterval(() => this.check(), settings.checkInterval);
      this.#timer.unref();
    }
  }

  /**
   * In a worker of `portico start --workers N` (N > 1) every worker writes the file. Plain rows are
   * appended whole, each file made once with its header, so they share it safely; rotation then
   * runs in every worker (no row is lost, but a worker's rows may land in the history file another
   * one just made), which a warning says. A tamper-evident file needs a single writer: its chain
   * would be broken, so it is refused.
   */
  #checkProcesses(): void {
    const isWorker =
      this.#clocks.isClusterWorker ??
      (process.getBuiltinModule('node:cluster') as unknown as { isWorker: boolean }).isWorker;
    if (!isWorker) return;
    if (this.settings.security) {
      throw new PorticoError(
        ErrorCode.CONFIG,
        `a tamper-evident audit file has one writer, and the gateway runs several worker processes: each would write ${this.file} and break its HMAC chain; start the gateway with --workers 1`,
        { expected: 'one gateway process (--workers 1) for a CSV handler with security enabled' },
      );
    }
    if (this.settings.rotation) {
      this.#logger.warn(
        'each worker process rotates the audit file by its own count and clock: rows may land in a history file another worker has just made',
        { handler: this.settings.name, file: this.file },
      );
    }
  }

  #newWriter(columns: readonly string[]): CsvWriter {
    const { settings } = this;
    const logFile = new LogFile(this.file, {
      ...(settings.rotation ? { rotation: settings.rotation } : {}),
      retention: settings.retention,
      ...(this.#clocks.clock ? { clock: this.#clocks.clock } : {}),
      // A tamper-evident file writes its own header, with its first row.
      ...(settings.security ? {} : { header: PlainCsvWriter.header(columns, settings.format) }),
    });
    const common = {
      logFile,
      columns,
      format: settings.format,
      logger: this.#logger,
      ...(this.#clocks.clock ? { clock: this.#clocks.clock } : {}),
    };
    return settings.security
      ? new SecureCsvWriter({
          ...common,
          keys: settings.security.keys,
          signatureInterval: settings.security.signatureInterval,
          ...(this.#clocks.schedule ? { schedule: this.#clocks.schedule } : {}),
        })
      : new PlainCsvWriter({ ...common, buffering: settings.buffering });
  }

  /** The file's writer: shared, and replaced when a handler of other settings starts on the file. */
  get #writer(): CsvWriter | undefined {
    return this.#lease?.writer;
  }

  async publish(topic: string, events: readonly AuditEvent[]): Promise<void> {
    if (topic !== 'access' || this.#closed) return;
    this.start();
    const writer = this.#writer!;
    const skip = this.#written;
    let done = 0;
    try {
      for (; done < events.length; done++) {
        const event = events[done]!;
        if (skip === undefined || !skip.has(event._id)) writer.write(event);
      }
      writer.endOfBatch();
      this.#written = undefined;
    } catch (error) {
      // The service publishes the batch again: the rows written already are not written twice.
      this.#written = new Set([...(skip ?? []), ...events.slice(0, done).map((event) => event._id)]);
      throw error;
    }
  }

  async flush(): Promise<void> {
    this.#writer?.flush();
  }

  /**
   * The periodic check (every `rotationRetentionCheckInterval`): rotation by time, retention, and the
   * rows a buffer without `autoFlush` holds. A failure is logged; the next check tries again.
   */
  check(): void {
    try {
      this.#writer?.tick();
    } catch (error) {
      this.#logger.error('the audit file could not be rotated, pruned or flushed', {
        handler: this.settings.name,
        file: this.file,
        error: error instanceof Error ? error.message : String(error),
      });
    }
  }

  /** Rotates the file now (rotation enabled); gives the history file's path. */
  rotate(): string | undefined {
    return this.#writer?.rotate();
  }

  async query(topic: string, query: AuditQuery): Promise<readonly AuditEvent[]> {
    if (topic !== 'access') return [];
    this.#writer?.flush();
    const matching: AuditEvent[] = [];
    for (const event of readEvents(this.file, this.#schema, this.settings.format)) {
      if (matching.length >= query.limit) break;
      if (matchesQueryFilter(query.filter, event)) matching.push(event);
    }
    return matching;
  }

  async read(topic: string, id: string): Promise<AuditEvent | undefined> {
    if (topic !== 'access') return undefined;
    this.#writer?.flush();
    return readEvents(this.file, this.#schema, this.settings.format).find((event) => event._id === id);
  }

  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    if (this.#timer !== undefined) clearInterval(this.#timer);
    if (this.#lease !== undefined) releaseShared(this.file, this.#lease, this);
  }
}

/**
 * One writer per file in this process, shared by the handlers that write to it. A route reload
 * starts the new route's handler while the old one still delivers what it holds; two writers of one
 * file would each follow their own HMAC chain and break it (and rotate it from under each other).
 * So the second handler of a file takes the first one's writer; when its settings differ (another
 * format, rotation or keystore), the writer is closed (signed) and replaced by one of the new
 * settings, which the older handler then writes through too. The last handler to close closes it.
 */
interface SharedWriter {
  writer: CsvWriter;
  fingerprint: string;
  users: Set<unknown>;
}

const OPEN_FILES = new Map<string, SharedWriter>();

function openShared(file: string, print: string, make: () => CsvWriter, user: unknown): SharedWriter {
  const shared = OPEN_FILES.get(file);
  if (shared !== undefined && shared.fingerprint === print) {
    shared.users.add(user);
    return shared;
  }
  if (shared !== undefined) {
    shared.writer.close();
    shared.writer = make();
    shared.fingerprint = print;
    shared.writer.open();
    shared.users.add(user);
    return shared;
  }
  const writer = make();
  writer.open();
  const opened: SharedWriter = { writer, fingerprint: print, users: new Set([user]) };
  OPEN_FILES.set(file, opened);
  return opened;
}

function releaseShared(file: string, shared: SharedWriter, user: unknown): void {
  shared.users.delete(user);
  if (shared.users.size > 0) return;
  if (OPEN_FILES.get(file) === shared) OPEN_FILES.delete(file);
  shared.writer.close();
}

const KEY_IDS = new WeakMap<object, number>();

/** What makes two handlers' writers of one file the same: every setting that shapes the file. */
function fingerprint(settings: CsvHandlerSettings, columns: readonly string[]): string {
  return JSON.stringify([
    columns,
    settings.format,
    settings.buffering,
    settings.security?.signatureInterval,
    settings.security === undefined ? 0 : keyId(settings.security.keys),
    settings.rotation && { ...settings.rotation, suffix: settings.rotation.suffix.source },
    settings.retention,
  ]);
}

let lastKeyId = 0;

/** A number per keys object (the keys read from one keystore content and password). */
function keyId(keys: object): number {
  let id = KEY_IDS.get(keys);
  if (id === undefined) {
    id = ++lastKeyId;
    KEY_IDS.set(keys, id);
  }
  return id;
}

export const CsvAuditEventHandlerHeaplet = defineHeaplet({
  type: 'CsvAuditEventHandler',
  kind: 'audit-handler',
  config: CSV_HANDLER_CONFIG,
  create: ({ config, environment, configAt, logger, onDestroy }) => {
    const rotation = config.fileRotation;
    let suffix: DatePattern;
    try {
      suffix = new DatePattern(rotation?.rotationFileSuffix ?? DEFAULT_SUFFIX);
    } catch (error) {
      if (!(error instanceof DatePatternError)) throw error;
      // As the incumbents do: the default pattern, so that history files still get distinct names.
      logger.warn(`the rotationFileSuffix is not a date pattern; ${DEFAULT_SUFFIX} is used`, {
        ...configAt('fileRotation', 'rotationFileSuffix'),
        problem: error.message,
      });
      suffix = new DatePattern(DEFAULT_SUFFIX);
    }
    const security = config.security?.enabled
      ? {
          signatureInterval: config.security.signatureInterval!.toMillis(),
          keys: loadKeys(
            keystorePath(config.security.filename!, environment.baseDirectory),
            config.security.password!,
            configAt,
          ),
        }
      : undefined;
    const buffering = {
      enabled: config.buffering?.enabled ?? false,
      autoFlush: config.buffering?.autoFlush ?? true,
    };
    if (security && buffering.enabled) {
      logger.warn(
        'a tamper-evident audit file is written unbuffered: buffering is ignored',
        configAt('buffering'),
      );
    }
    const settings: CsvHandlerSettings = {
      name: config.name,
      enabled: config.enabled,
      topics: config.topics,
      logDirectory: path.resolve(environment.baseDirectory, config.logDirectory),
      format: {
        quoteChar: config.formatting?.quoteChar ?? '"',
        delimiterChar: config.formatting?.delimiterChar ?? ',',
        endOfLineSymbols: config.formatting?.endOfLineSymbols ?? EOL,
      },
      buffering: security ? { enabled: false, autoFlush: true } : buffering,
      security,
      rotation: rotation?.rotationEnabled
        ? {
            maxFileSize: rotation.maxFileSize,
            interval: rotation.rotationInterval?.toMillis(),
            times: rotation.rotationTimes.filter((time) => !time.isUnlimited).map((time) => time.toMillis()),
            prefix: rotation.rotationFilePrefix,
            suffix,
          }
        : undefined,
      retention: {
        maxNumberOfHistoryFiles: config.fileRetention?.maxNumberOfHistoryFiles ?? 0,
        maxDiskSpaceToUse: config.fileRetention?.maxDiskSpaceToUse ?? 0,
        minFreeSpaceRequired: config.fileRetention?.minFreeSpaceRequired ?? 0,
      },
      checkInterval: config.rotationRetentionCheckInterval.toMillis(),
    };
    const writer = new CsvAuditEventHandler(settings, logger);
    const handler: AuditEventHandler = auditHandler({
      name: settings.name,
      topics: settings.topics,
      enabled: settings.enabled,
      start: (topics) => {
        if (settings.enabled) writer.start(topics);
      },
      publish: (topic, events) => writer.publish(topic, events),
      flush: () => writer.flush(),
      close: () => writer.close(),
      query: (topic, query) => writer.query(topic, query),
      read: (topic, id) => writer.read(topic, id),
    });
    HANDLERS.set(handler, writer);
    onDestroy(() => handler.close());
    return handler;
  },
});

const HANDLERS = new WeakMap<AuditEventHandler, CsvAuditEventHandler>();

/**
 * The CSV handler behind an audit handler the heaplet made: its settings, its file, `rotate` and
 * `check`. Undefined for any other handler.
 */
export function csvHandlerOf(handler: AuditEventHandler): CsvAuditEventHandler | undefined {
  return HANDLERS.get(handler);
}

/**
 * Keys read, by keystore file, content and password: decrypting a JCEKS key takes about a second,
 * and a route reload should not pay it again for a keystore that has not changed.
 */
const KEYS = new Map<string, TamperEvidenceKeys>();

/** Reads the keystore's keys (once per file content and password); errors name the settings. */
function loadKeys(
  file: string,
  password: string,
  configAt: (...keys: string[]) => { file?: string; jsonPath: string },
): TamperEvidenceKeys {
  let bytes: Buffer;
  try {
    bytes = readFileSync(file);
  } catch (error) {
    throw new PorticoError(
      ErrorCode.CONFIG,
      (error as NodeJS.ErrnoException).code === 'ENOENT'
        ? `the keystore file '${file}' does not exist`
        : `the keystore cannot be read: ${(error as Error).message}`,
      { ...configAt('security', 'filename'), expected: 'a readable JCEKS or PKCS12 keystore' },
    );
  }
  const cacheKey = createHash('sha256')
    .update(file)
    .update('\0')
    .update(password)
    .update('\0')
    .update(bytes)
    .digest('hex');
  const known = KEYS.get(cacheKey);
  if (known !== undefined) return known;
  try {
    const keys = readTamperEvidenceKeys(bytes, password);
    KEYS.set(cacheKey, keys);
    return keys;
  } catch (error) {
    if (error instanceof WrongPasswordError) {
      throw new PorticoError(KeyStoreErrorCode.PASSWORD, error.message, {
        ...configAt('security', 'password'),
        expected: 'the password of the keystore and of its keys',
      });
    }
    const code = (error as { code?: string }).code;
    throw new PorticoError(
      code === KeyStoreErrorCode.PASSWORD
        ? KeyStoreErrorCode.PASSWORD
        : code === KeyStoreErrorCode.ENTRY
          ? KeyStoreErrorCode.ENTRY
          : ErrorCode.CONFIG,
      `${file}: ${error instanceof Error ? error.message : String(error)}`,
      {
        ...configAt('security', code === KeyStoreErrorCode.PASSWORD ? 'password' : 'filename'),
        expected: "a keystore with an RSA key pair under 'Signature' and an HmacSHA256 key under 'Password'",
      },
    );
  }
}
