import { randomBytes } from 'node:crypto';
import { closeSync, existsSync, openSync, readFileSync, readSync, renameSync, statSync } from 'node:fs';
import type { Logger } from '@portico/gateway-core';
import { type ColumnPaths, cellsOf, columnPaths } from './columns.ts';
import { type CsvFormat, formatRow, normalizeLineBreaks, parseCsv } from './csv-format.ts';
import { DatePattern } from './date-pattern.ts';
import type { LogFile } from './log-file.ts';
import { RowBytes } from './row-bytes.ts';
import {
  type ChainState,
  COMPANION_ENDING,
  companionPassword,
  HMAC_COLUMN,
  nextKey,
  readCompanion,
  rowHmac,
  SIGNATURE_COLUMN,
  signedData,
  signRows,
  type TamperEvidenceKeys,
  writeCompanion,
} from './tamper-evidence.ts';
import { verifyTamperEvident } from './verify.ts';

/** Buffered rows are written once they reach this many bytes, whatever `autoFlush` says. */
const BUFFER_LIMIT = 64 * 1024;

/** Runs `task` once after `ms`; gives what cancels it. Tests give their own. */
export type Scheduler = (task: () => void, ms: number) => () => void;

export const timerScheduler: Scheduler = (task, ms) => {
  const timer = setTimeout(task, ms);
  timer.unref();
  return () => clearTimeout(timer);
};

export interface WriterOptions {
  logFile: LogFile;
  columns: readonly string[];
  format: CsvFormat;
  logger: Logger;
  clock?: () => number;
}

/**
 * Writes a topic's events to its log file, one row each, with the columns' header at the top of
 * every file. `open` resumes a file that is there (its header must be these columns; a file that
 * cannot be resumed is set aside under another name and a new one begun).
 */
export abstract class CsvWriter {
  protected readonly logFile: LogFile;
  protected readonly columns: readonly string[];
  protected readonly paths: ColumnPaths;
  protected readonly format: CsvFormat;
  protected readonly logger: Logger;
  protected readonly clock: () => number;

  constructor(options: WriterOptions) {
    this.logFile = options.logFile;
    this.columns = options.columns;
    this.paths = columnPaths(options.columns);
    this.format = options.format;
    this.logger = options.logger;
    this.clock = options.clock ?? Date.now;
    this.logFile.hooks = {
      beforeRotation: () => this.beforeRotation(),
      afterRotation: (history) => this.afterRotation(history),
    };
  }

  get file(): string {
    return this.logFile.file;
  }

  abstract open(): void;
  /** Formats an event into a row and writes it, or keeps it with the rows waiting to be written. */
  abstract write(event: unknown): void;
  /** The end of a batch of events: buffered rows are written when `autoFlush` says so. */
  endOfBatch(): void {}
  /** Writes what waits to be written. */
  flush(): void {}
  /** The periodic check: rotation by time, retention, and rows buffered without `autoFlush`. */
  tick(): void {
    this.flush();
    this.logFile.rotateIfDue();
    this.logFile.applyRetention();
  }
  /** Rotates now, as a policy would (when rotation is enabled); gives the history file. */
  rotate(): string | undefined {
    this.flush();
    return this.logFile.rotate();
  }
  abstract close(): void;

  protected beforeRotation(): void {}
  protected abstract afterRotation(history: string): void;

  /** The values of an event's row, line breaks written as the file's end of line. */
  protected values(event: unknown): (string | undefined)[] {
    const cells = cellsOf(event, this.paths);
    for (let i = 0; i < cells.length; i++) {
      const cell = cells[i];
      if (cell !== undefined) cells[i] = normalizeLineBreaks(cell, this.format);
    }
    return cells;
  }

  /**
   * Renames a file that cannot be resumed (and its keystore) out of the way:
   * `<file>.set-aside-<date>`, for whoever looks into it; its rows are never deleted by retention.
   */
  protected setAside(why: string): string {
    const stamp = new DatePattern('yyyy.MM.dd-HH.mm.ss').format(this.clock());
    let target = `${this.file}.set-aside-${stamp}`;
    for (let n = 1; existsSync(target); n++) target = `${this.file}.set-aside-${stamp}.${n}`;
    renameSync(this.file, target);
    if (existsSync(this.file + COMPANION_ENDING))
      renameSync(this.file + COMPANION_ENDING, target + COMPANION_ENDING);
    this.logger.error('the audit file cannot be resumed: it is set aside and a new one begun', {
      file: this.file,
      setAside: target,
      reason: why,
    });
    return target;
  }
}

/** Reads the first row of a file (its header), or undefined when it has none that ends. */
function headerOf(file: string, format: CsvFormat): string[] | undefined {
  const fd = openSync(file, 'r');
  try {
    const buffer = Buffer.alloc(64 * 1024);
    const length = readSync(fd, buffer, 0, buffer.length, 0);
    const { rows } = parseCsv(buffer.subarray(0, length).toString('utf8'), format);
    return rows.length > 1 || length < buffer.length ? rows[0]?.cells.map((cell) => cell ?? '') : undefined;
  } catch {
    return undefined;
  } finally {
    closeSync(fd);
  }
}

function lastByte(file: string): number | undefined {
  const { size } = statSync(file);
  if (size === 0) return undefined;
  const fd = openSync(file, 'r');
  try {
    const buffer = Buffer.alloc(1);
    readSync(fd, buffer, 0, 1, size - 1);
    return buffer[0];
  } finally {
    closeSync(fd);
  }
}

function sameColumns(a: readonly string[] | undefined, b: readonly string[]): boolean {
  return a !== undefined && a.length === b.length && a.every((column, i) => column === b[i]);
}

/** `access.csv`: rows as they are, written one by one or gathered in a buffer. */
export class PlainCsvWriter extends CsvWriter {
  readonly #buffering: { enabled: boolean; autoFlush: boolean };
  readonly #header: string;
  /** Rows not written yet: one, unbuffered. */
  readonly #rows: RowBytes;

  constructor(options: WriterOptions & { buffering: { enabled: boolean; autoFlush: boolean } }) {
    super(options);
    this.#buffering = options.buffering;
    this.#rows = new RowBytes(this.paths, this.format);
    this.#header = PlainCsvWriter.header(this.columns, this.format);
  }

  /** The header row of a plain file: what its LogFile creates every file with. */
  static header(columns: readonly string[], format: CsvFormat): string {
    return formatRow(columns, format);
  }

  open(): void {
    if (existsSync(this.file) && statSync(this.file).size > 0) {
      const header = headerOf(this.file, this.format);
      if (!sameColumns(header, this.columns)) {
        this.setAside(header === undefined ? 'it has no header' : 'its header is not these columns');
      }
    }
    // The log file is made with its header (PlainCsvWriter.header).
    const size = this.logFile.open();
    if (size <= Buffer.byteLength(this.#header)) return;
    this.logFile.markRows();
    const last = lastByte(this.file);
    // A row cut short by a crash: the next one starts on a line of its own.
    const eol = this.format.endOfLineSymbols;
    if (last !== 0x0a && last !== 0x0d && last !== eol.charCodeAt(eol.length - 1)) {
      this.logFile.writePreamble(eol);
    }
  }

  write(event: unknown): void {
    this.#rows.append(event);
    if (this.#buffering.enabled) {
      if (this.#rows.length >= BUFFER_LIMIT) this.flush();
      return;
    }
    try {
      this.flush();
    } catch (error) {
      // Unbuffered, a row that was not written is the handler's to publish again, not to keep.
      this.#rows.clear();
      throw error;
    }
  }

  override endOfBatch(): void {
    if (this.#buffering.autoFlush) this.flush();
  }

  /** Writes the buffered rows; on failure they stay buffered, for the next flush. */
  override flush(): void {
    if (this.#rows.length === 0) return;
    this.logFile.write(this.#rows.bytes);
    this.#rows.clear();
  }

  /** The new file was made with its header. */
  protected afterRotation(): void {}

  close(): void {
    this.flush();
    this.logFile.close();
  }
}

/**
 * `tamper-evident-access.csv`: each row with its HMAC, a signature row `signatureInterval` after the
 * first row that follows a signature, and one more when the file is closed or rotated. Rows are
 * written one by one (buffering does not apply: a row waiting in memory is a row the chain's state
 * has passed). The companion keystore is rewritten with each signature.
 */
export class SecureCsvWriter extends CsvWriter {
  readonly #keys: TamperEvidenceKeys;
  readonly #signatureInterval: number;
  readonly #schedule: Scheduler;
  readonly #header: string;
  readonly #emptyCells: undefined[];
  #chain: ChainState = {
    initialKey: Buffer.alloc(0),
    currentKey: Buffer.alloc(0),
    currentSignature: undefined,
  };
  #key: Buffer = Buffer.alloc(0);
  #lastHmac: string | undefined;
  #lastSignature: Buffer | undefined;
  #headerWritten = false;
  #unsignedRows = 0;
  #cancelSignature: (() => void) | undefined;

  constructor(
    options: WriterOptions & { keys: TamperEvidenceKeys; signatureInterval: number; schedule?: Scheduler },
  ) {
    super(options);
    this.#keys = options.keys;
    this.#signatureInterval = options.signatureInterval;
    this.#schedule = options.schedule ?? timerScheduler;
    this.#header = formatRow([...this.columns, HMAC_COLUMN, SIGNATURE_COLUMN], this.format);
    this.#emptyCells = new Array(this.columns.length + 1).fill(undefined);
  }

  get #password(): string {
    return companionPassword(this.#keys);
  }

  get #companion(): string {
    return this.file + COMPANION_ENDING;
  }

  open(): void {
    // A file that does not verify is set aside, and a new one begun.
    if (existsSync(this.file) && statSync(this.file).size > 0) this.#resume();
    const size = this.logFile.open();
    if (size > 0) {
      this.logFile.markRows();
      if (this.#unsignedRows > 0) {
        this.logger.warn('the audit file was not closed: its last rows are signed now', {
          file: this.file,
          rows: this.#unsignedRows,
        });
        this.#sign();
      }
      return;
    }
    this.#begin();
  }

  /** Picks up the chain of a file that is there; false (having set it aside) when it does not verify. */
  #resume(): boolean {
    let problem: string;
    try {
      const chain = readCompanion(this.#companion, this.#password);
      const result = verifyTamperEvident(readFileSync(this.file, 'utf8'), chain, this.#keys.verifyingKey, {
        format: this.format,
        resume: true,
      });
      if (result.ok && result.end !== undefined && sameColumns(result.end.header, this.columns)) {
        this.#chain = chain;
        this.#key = result.end.key;
        this.#lastHmac = result.end.lastHmac;
        this.#lastSignature = result.end.lastSignature;
        this.#unsignedRows = result.end.unsignedRows;
        this.#headerWritten = true;
        return true;
      }
      problem = result.ok ? 'its header is not these columns' : result.problem;
    } catch (error) {
      problem = `its keystore cannot be read: ${error instanceof Error ? error.message : String(error)}`;
    }
    this.setAside(problem);
    return false;
  }

  /** A new file: a new random first key, saved before any row uses it. */
  #begin(): void {
    const initialKey = randomBytes(32);
    this.#chain = { initialKey, currentKey: initialKey, currentSignature: undefined };
    this.#key = initialKey;
    this.#unsignedRows = 0;
    this.#headerWritten = false;
    writeCompanion(this.#companion, this.#chain, this.#password);
  }

  write(event: unknown): void {
    if (!this.#headerWritten) {
      this.logFile.writePreamble(this.#header);
      this.#headerWritten = true;
    }
    const values = this.values(event);
    const hmac = rowHmac(this.#key, values);
    this.#key = nextKey(this.#key);
    this.#lastHmac = hmac;
    this.#unsignedRows++;
    values.push(hmac, undefined);
    if (this.#cancelSignature === undefined) {
      this.#cancelSignature = this.#schedule(() => {
        this.#cancelSignature = undefined;
        this.#sign();
      }, this.#signatureInterval);
    }
    this.logFile.write(formatRow(values, this.format));
  }

  /** Writes a signature row over the rows since the last one, then saves the chain's state. */
  #sign(): void {
    this.#cancelSignature?.();
    this.#cancelSignature = undefined;
    if (this.#unsignedRows === 0 || this.#lastHmac === undefined || !this.logFile.isOpen) return;
    const signature = signRows(signedData(this.#lastHmac, this.#lastSignature), this.#keys.signingKey!);
    this.logFile.writePreamble(this.#signatureRow(signature));
    this.#lastSignature = signature;
    this.#unsignedRows = 0;
    this.#chain = { ...this.#chain, currentKey: this.#key, currentSignature: signature };
    writeCompanion(this.#companion, this.#chain, this.#password);
  }

  #signatureRow(signature: Buffer): string {
    return formatRow([...this.#emptyCells, signature.toString('base64')], this.format);
  }

  /** Signs what is not signed yet: a file that is rotated or closed ends with a signature. */
  protected override beforeRotation(): void {
    this.#sign();
  }

  /** The new file carries the last signature of the one before it, and gets a chain of its own. */
  protected afterRotation(): void {
    this.#begin();
    this.logFile.writePreamble(this.#header);
    this.#headerWritten = true;
    if (this.#lastSignature !== undefined)
      this.logFile.writePreamble(this.#signatureRow(this.#lastSignature));
  }

  /** Signs now rather than at the end of the interval (tests; the periodic check does not). */
  signNow(): void {
    this.#sign();
  }

  close(): void {
    this.#sign();
    this.logFile.close();
  }
}
