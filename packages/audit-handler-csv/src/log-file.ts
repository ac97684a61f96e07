import { randomBytes } from 'node:crypto';
import {
  closeSync,
  existsSync,
  fstatSync,
  linkSync,
  openSync,
  readdirSync,
  renameSync,
  rmSync,
  statfsSync,
  statSync,
  writeFileSync,
  writeSync,
} from 'node:fs';
import path from 'node:path';
import { type DatePattern, escapeRegex } from './date-pattern.ts';

/** What time it is, in milliseconds since the epoch: `Date.now` unless a test gives its own. */
export type Clock = () => number;

/** When the live file becomes a history file. */
export interface RotationPolicy {
  /** Bytes; the file rotates once it holds this many. 0 or less: no size limit. */
  maxFileSize: number;
  /** Milliseconds between rotations; undefined: none. */
  interval: number | undefined;
  /** Offsets from local midnight, in milliseconds, at which the file rotates every day. */
  times: readonly number[];
  /** What a history file's name starts with, before the live file's name. */
  prefix: string;
  /** The date (when it rotated) that ends a history file's name. */
  suffix: DatePattern;
}

/** Which history files are deleted: the oldest first, until every limit holds. */
export interface RetentionPolicy {
  /** More history files than this: the oldest go. 0 or less: no limit. */
  maxNumberOfHistoryFiles: number;
  /** Bytes the history files may take together. 0 or less: no limit. */
  maxDiskSpaceToUse: number;
  /** Bytes the file system must keep free. 0 or less: no limit. */
  minFreeSpaceRequired: number;
}

/** What a writer adds around a rotation: its last rows in the old file, its first ones in the new. */
export interface RotationHooks {
  /** Before the live file is closed and renamed. */
  beforeRotation?(): void;
  /** Once it is renamed to `historyFile` and a new live file is open. */
  afterRotation?(historyFile: string): void;
}

/** Files that go with a log file and are renamed and deleted with it (a keystore): their name endings. */
const COMPANION_ENDINGS = ['.keystore'];

/**
 * The live log file: appends text synchronously, counts its bytes, and rotates it (renames it to a
 * history file and starts a new one) when the policy says so; then deletes the history files that
 * retention says are too many. A history file is named `<prefix><file name><date>`, with `.1`,
 * `.2` ... added when that name is taken.
 */
export class LogFile {
  readonly file: string;
  readonly #rotation: RotationPolicy | undefined;
  readonly #retention: RetentionPolicy | undefined;
  readonly #clock: Clock;
  readonly #header: string | undefined;
  #hooks: RotationHooks = {};
  #fd: number | undefined;
  #size = 0;
  #lastRotation = 0;
  #nextFixedTime = Infinity;
  /** Rows written since the file was opened or rotated: an empty file never rotates. */
  #hasRows = false;
  #rotating = false;

  /**
   * `header`: what every file begins with. A new file is then created holding it already (written
   * beside it and linked into place), so that of several processes appending to one file, exactly
   * one creates it and none writes a second header into it.
   */
  constructor(
    file: string,
    options: { rotation?: RotationPolicy; retention?: RetentionPolicy; clock?: Clock; header?: string } = {},
  ) {
    this.file = file;
    this.#rotation = options.rotation;
    this.#retention = options.retention;
    this.#clock = options.clock ?? Date.now;
    this.#header = options.header;
  }

  set hooks(hooks: RotationHooks) {
    this.#hooks = hooks;
  }

  /**
   * Opens the file for appending, creating it (with the header, when there is one); a missing
   * directory is an error the caller reports. Gives the size the file had: 0 for a new file (or,
   * with a header, the header's size).
   */
  open(): number {
    let existing: { size: number; mtimeMs: number } | undefined;
    try {
      existing = statSync(this.file);
    } catch {
      existing = undefined;
    }
    if (this.#header !== undefined && (existing === undefined || existing.size === 0)) {
      // An empty file is no file of ours: every one we make holds its header.
      if (existing !== undefined) rmSync(this.file, { force: true });
      this.#create();
      existing = undefined;
    }
    this.#fd = openSync(this.file, 'a');
    this.#size = fstatSync(this.#fd).size;
    this.#hasRows = false;
    this.#rotated(existing !== undefined && existing.size > 0 ? existing.mtimeMs : this.#clock());
    return this.#size;
  }

  /** Creates the file holding its header, unless another process has just created it. */
  #create(): void {
    const temporary = `${this.file}.${process.pid}.${randomBytes(4).toString('hex')}.new`;
    writeFileSync(temporary, this.#header!);
    try {
      linkSync(temporary, this.file);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
    } finally {
      rmSync(temporary, { force: true });
    }
  }

  get size(): number {
    return this.#size;
  }

  get isOpen(): boolean {
    return this.#fd !== undefined;
  }

  /** Says the file holds rows already (one it reopened): it may rotate before anything new is written. */
  markRows(): void {
    this.#hasRows = true;
  }

  /** Appends rows; then rotates when the file has grown past its size or its time has come. */
  write(text: string | Uint8Array): void {
    this.writePreamble(text);
    this.#hasRows = true;
    if (!this.#rotating) this.rotateIfDue();
  }

  /** Appends what begins a file (a header, a carried signature): it does not make an empty file rotate. */
  writePreamble(text: string | Uint8Array): void {
    if (this.#fd === undefined) throw new Error(`the log file ${this.file} is closed`);
    const bytes = typeof text === 'string' ? Buffer.from(text) : text;
    // A write may take part of the bytes (a full disk): the rest follows, or the error does.
    for (let at = 0; at < bytes.length; ) at += writeSync(this.#fd, bytes, at);
    this.#size += bytes.length;
  }

  /** Whether a policy asks for a rotation now. */
  isRotationDue(): boolean {
    const policy = this.#rotation;
    if (policy === undefined || !this.#hasRows || this.#fd === undefined) return false;
    if (policy.maxFileSize > 0 && this.#size >= policy.maxFileSize) return true;
    const now = this.#clock();
    if (policy.interval !== undefined && now - this.#lastRotation >= policy.interval) return true;
    return now >= this.#nextFixedTime;
  }

  /** Rotates when a policy says so; true when it did. */
  rotateIfDue(): boolean {
    if (!this.isRotationDue()) return false;
    this.rotate();
    return true;
  }

  /** Renames the live file to its history name and starts a new one; then applies retention. */
  rotate(): string | undefined {
    const policy = this.#rotation;
    if (policy === undefined || this.#fd === undefined) return undefined;
    this.#rotating = true;
    try {
      this.#hooks.beforeRotation?.();
      closeSync(this.#fd);
      this.#fd = undefined;
      const history = this.#historyName(policy);
      renameSync(this.file, history);
      for (const ending of COMPANION_ENDINGS) {
        if (existsSync(this.file + ending)) renameSync(this.file + ending, history + ending);
      }
      if (this.#header !== undefined) this.#create();
      this.#fd = openSync(this.file, 'a');
      this.#size = fstatSync(this.#fd).size;
      this.#hasRows = false;
      this.#rotated(this.#clock());
      this.#hooks.afterRotation?.(history);
      this.applyRetention();
      return history;
    } finally {
      this.#rotating = false;
    }
  }

  /** Deletes the oldest history files until the retention limits hold; gives the files deleted. */
  applyRetention(): string[] {
    const policy = this.#retention;
    if (policy === undefined || this.#rotation === undefined) return [];
    const history = this.historyFiles();
    const doomed = new Set<string>();
    if (policy.maxNumberOfHistoryFiles > 0 && history.length > policy.maxNumberOfHistoryFiles) {
      for (const file of history.slice(0, history.length - policy.maxNumberOfHistoryFiles))
        doomed.add(file.path);
    }
    if (policy.maxDiskSpaceToUse > 0) {
      let used = history.reduce((sum, file) => sum + file.size, 0);
      for (const file of history) {
        if (used <= policy.maxDiskSpaceToUse) break;
        doomed.add(file.path);
        used -= file.size;
      }
    }
    if (policy.minFreeSpaceRequired > 0 && history.length > 0) {
      const stats = statfsSync(path.dirname(this.file));
      let free = Number(stats.bavail) * Number(stats.bsize);
      for (const file of history) {
        if (free >= policy.minFreeSpaceRequired) break;
        if (!doomed.has(file.path)) free += file.size;
        doomed.add(file.path);
      }
    }
    for (const file of doomed) {
      rmSync(file, { force: true });
      for (const ending of COMPANION_ENDINGS) rmSync(file + ending, { force: true });
    }
    return [...doomed];
  }

  /** The history files of this log, the oldest first (by modification time, then name). */
  historyFiles(): { path: string; size: number; mtimeMs: number }[] {
    const policy = this.#rotation;
    if (policy === undefined) return [];
    const directory = path.dirname(this.file);
    const pattern = new RegExp(
      `^${escapeRegex(policy.prefix + path.basename(this.file))}${policy.suffix.regex}(\\.\\d+)?$`,
    );
    const files: { path: string; size: number; mtimeMs: number }[] = [];
    for (const name of readdirSync(directory)) {
      if (!pattern.test(name)) continue;
      try {
        const stats = statSync(path.join(directory, name));
        if (stats.isFile())
          files.push({ path: path.join(directory, name), size: stats.size, mtimeMs: stats.mtimeMs });
      } catch {
        // Deleted meanwhile.
      }
    }
    return files.sort((a, b) => a.mtimeMs - b.mtimeMs || (a.path < b.path ? -1 : a.path > b.path ? 1 : 0));
  }

  close(): void {
    if (this.#fd === undefined) return;
    closeSync(this.#fd);
    this.#fd = undefined;
  }

  #rotated(time: number): void {
    this.#lastRotation = time;
    this.#nextFixedTime = nextFixedTime(time, this.#rotation?.times ?? []);
  }

  #historyName(policy: RotationPolicy): string {
    const base = path.join(
      path.dirname(this.file),
      policy.prefix + path.basename(this.file) + policy.suffix.format(this.#clock()),
    );
    let name = base;
    for (let n = 1; existsSync(name); n++) name = `${base}.${n}`;
    return name;
  }
}

/** The first of the daily rotation times after `time` (local midnight plus each offset), or Infinity. */
export function nextFixedTime(time: number, offsets: readonly number[]): number {
  if (offsets.length === 0) return Infinity;
  const midnight = new Date(time);
  midnight.setHours(0, 0, 0, 0);
  let next = Infinity;
  for (let day = 0; day <= 1; day++) {
    const start = new Date(midnight);
    start.setDate(start.getDate() + day);
    for (const offset of offsets) {
      const at = start.getTime() + offset;
      if (at > time && at < next) next = at;
    }
  }
  return next;
}
