import { closeSync, constants, fstatSync, openSync, readSync } from 'node:fs';
import path from 'node:path';
import {
  type Bindings,
  bindingsFor,
  type Context,
  defineHeaplet,
  type Expression,
  evaluateSettled,
  type Filter,
  type Handler,
  isPorticoError,
  LazyMap,
  type Logger,
  type LValueExpression,
  PorticoError,
  type Request,
  type Response,
  s,
} from '@portico/gateway-core';
import { toText } from '@portico/gateway-core/expressions';
import { charsetDecoder, charsetSetting } from '@portico/gateway-core/http-helpers';
import { parseRecords, SEPARATORS, type SeparatorName } from './separated-values.ts';

export interface FileAttributesFilterOptions {
  file: Expression<string>;
  charset: string;
  separator: SeparatorName;
  header: boolean;
  fields: readonly string[] | undefined;
  target: LValueExpression;
  key: string;
  value: Expression<unknown>;
  name: string;
  logger: Logger;
}

/**
 * The largest file read. The read is synchronous and the parsed records stay in memory, so a file
 * the `file` expression names by mistake (a log, a disk image, `/dev/zero` from a request's `../`)
 * must not hold the process: beyond this, the file is refused as unreadable.
 */
const MAX_FILE_BYTES = 32 * 1024 * 1024;

/** A parsed file, kept while its size and modification time stay the same. */
interface ParsedFile {
  path: string;
  mtimeMs: number;
  size: number;
  records: string[][];
}

/**
 * FileAttributesFilter sets its target to the record of a delimiter-separated file whose `key` column
 * holds `value`, as a map of field → text. The lookup is lazy: the target receives a LazyMap, and the
 * file is read (and `file` and `value` evaluated) only when something first reads the target, which
 * may be never. No matching record, or a file that cannot be read, gives an empty map and a log line.
 *
 * The read is synchronous, because expressions read the target synchronously; the parsed file is
 * kept while it is unchanged, so later lookups cost a `stat` and a scan.
 */
export class FileAttributesFilter implements Filter {
  readonly #options: FileAttributesFilterOptions;
  readonly #decode: (bytes: Uint8Array) => string;
  #cached: ParsedFile | undefined;

  constructor(options: FileAttributesFilterOptions) {
    this.#options = options;
    this.#decode = charsetDecoder(options.charset)!;
  }

  filter(context: Context, request: Request, next: Handler): Promise<Response> {
    const bindings = bindingsFor(context, request);
    this.#options.target.assign(bindings, new LazyMap(() => this.lookup(bindings)));
    return next.handle(context, request);
  }

  /**
   * The record for these bindings, or an empty map; never throws. Synchronous, unless `file` or
   * `value` reads a lazy map still loading (another filter's target): then a promise of it.
   */
  lookup(bindings: Bindings): Record<string, string> | Promise<Record<string, string>> {
    const { file, value } = this.#options;
    const fileName = evaluateSettled(file, bindings);
    const wanted = evaluateSettled(value, bindings);
    if (fileName instanceof Promise || wanted instanceof Promise) {
      return Promise.all([fileName, wanted]).then(([f, w]) => this.#lookup(f, w));
    }
    return this.#lookup(fileName, wanted);
  }

  #lookup(fileName: string | null, wanted: unknown): Record<string, string> {
    const { file, value, key, logger, name } = this.#options;
    if (fileName === null || fileName === '') {
      logger.warn('the file expression gave no file name; the target is empty', {
        filter: name,
        file: file.text,
      });
      return {};
    }
    if (wanted === null) {
      logger.debug('the value to look up is null; the target is empty', { filter: name, value: value.text });
      return {};
    }
    let records: string[][];
    try {
      records = this.#records(path.resolve(fileName));
    } catch (error) {
      logger.warn('the file could not be read; the target is empty', {
        filter: name,
        file: fileName,
        ...(isPorticoError(error) ? { code: error.code } : {}),
        error: error instanceof Error ? error.message : String(error),
      });
      return {};
    }
    const found = this.#find(records, toText(wanted));
    if (!found) logger.debug('no record matches; the target is empty', { filter: name, file: fileName, key });
    return found ?? {};
  }

  #find(records: string[][], wanted: string): Record<string, string> | undefined {
    const { header, key } = this.#options;
    const rows = header ? records.slice(1) : records;
    // Without `fields`, the header row names the columns, else the column numbers (from 0) do.
    const fields = this.#options.fields ?? (header ? records[0] : undefined);
    const index = fields ? fields.indexOf(key) : /^\d+$/.test(key) ? Number(key) : -1;
    if (index < 0) return undefined;
    const record = rows.find((row) => row[index] === wanted);
    if (!record) return undefined;
    const out: Record<string, string> = {};
    const names = fields ?? record.map((_, i) => String(i));
    for (let i = 0; i < Math.min(names.length, record.length); i++) out[names[i]!] = record[i]!;
    return out;
  }

  #records(file: string): string[][] {
    // Non-blocking: opening a FIFO without a writer would otherwise wait forever, event loop and all.
    const fd = openSync(file, constants.O_RDONLY | constants.O_NONBLOCK);
    try {
      const stat = fstatSync(fd);
      if (!stat.isFile()) throw new PorticoError(FileAttributesErrorCode.FILE, 'not a regular file');
      if (stat.size > MAX_FILE_BYTES) throw tooLarge(MAX_FILE_BYTES);
      const cached = this.#cached;
      if (cached && cached.path === file && cached.mtimeMs === stat.mtimeMs && cached.size === stat.size) {
        return cached.records;
      }
      const bytes = readAtMost(fd, MAX_FILE_BYTES);
      const records = parseRecords(this.#decode(bytes), SEPARATORS[this.#options.separator]);
      this.#cached = { path: file, mtimeMs: stat.mtimeMs, size: stat.size, records };
      return records;
    } finally {
      closeSync(fd);
    }
  }
}

/** The filter's own error code, beside the core's (listed in the README). */
export const FileAttributesErrorCode = {
  /** The file named is not a regular file, or is larger than the filter reads (32 MiB). */
  FILE: 'PORTICO_E_FILE_ATTRIBUTES_FILE',
} as const;

function tooLarge(max: number): PorticoError {
  return new PorticoError(FileAttributesErrorCode.FILE, `the file is larger than ${max} bytes`);
}

/** The whole file, which must hold at most `max` bytes (it may have grown since it was measured). */
function readAtMost(fd: number, max: number): Buffer {
  const chunks: Buffer[] = [];
  let total = 0;
  for (;;) {
    const chunk = Buffer.allocUnsafe(Math.min(64 * 1024, max + 1 - total));
    const read = readSync(fd, chunk, 0, chunk.length, null);
    if (read === 0) return Buffer.concat(chunks, total);
    chunks.push(chunk.subarray(0, read));
    total += read;
    if (total > max) throw tooLarge(max);
  }
}

export const FileAttributesFilterHeaplet = defineHeaplet({
  type: 'FileAttributesFilter',
  kind: 'filter',
  config: s.object({
    // Evaluated when the target is first read, so it may use the request; `${env[...]}` works too.
    file: s.expression('string'),
    charset: charsetSetting(),
    separator: s.enumOf(['COLON', 'COMMA', 'TAB'] as const).default('COMMA'),
    header: s.boolean().default(true),
    fields: s.array(s.string()).optional(),
    target: s.lvalue(),
    key: s.string(),
    value: s.expression('any'),
  }),
  create: ({ config, name, logger }) =>
    new FileAttributesFilter({
      file: config.file,
      charset: config.charset,
      separator: config.separator,
      header: config.header,
      fields: config.fields,
      target: config.target,
      key: config.key,
      value: config.value,
      name,
      logger,
    }),
});
