import type { KeyObject } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { type CsvFormat, CsvSyntaxError, DEFAULT_FORMAT, type ParsedRow, parseCsv } from './csv-format.ts';
import {
  type ChainState,
  COMPANION_ENDING,
  companionPassword,
  HMAC_COLUMN,
  nextKey,
  readCompanion,
  rowHmac,
  SIGNATURE_COLUMN,
  sameBytes,
  signatureMatches,
  signedData,
  type TamperEvidenceKeys,
} from './tamper-evidence.ts';

/**
 * Checking a CSV audit file. A tamper-evident file is checked row by row against its HMAC chain and
 * signatures, and its end against the chain's key in its companion keystore: the first row altered,
 * removed, inserted or moved is named, and so is an end cut off. A plain file can only be checked
 * for form: a header, rows of as many cells, a last row that ends.
 */

export type Verification =
  | {
      ok: true;
      tamperEvident: boolean;
      /** The rows of events. */
      rows: number;
      /** The signature rows, a carried one at the top of a rotated file included. */
      signatures: number;
    }
  | {
      ok: false;
      tamperEvident: boolean;
      /** What is wrong, naming the row (the header is row 1) and its line when they differ. */
      problem: string;
      /** The first row found wrong; undefined when the file's end or its keys are at fault. */
      row?: number;
    };

/** Where a tamper-evident file's chain stands after its last row, for a writer resuming it. */
export interface ChainEnd {
  header: string[];
  key: Buffer;
  lastHmac: string | undefined;
  lastSignature: Buffer | undefined;
  /** Rows after the last signature: a writer that stopped without closing the file left them unsigned. */
  unsignedRows: number;
  /** Rows of events in the file. */
  rows: number;
}

/** How far ahead and back the chain is searched to tell a removed or moved row from an altered one. */
const SEARCH = 1000;

/** Thrown (and caught by `verifyCsvFile`) when the problem is in the invocation, not the file. */
export class VerificationUsageError extends Error {}

/**
 * Checks a tamper-evident file's text, given its companion keystore's keys and the signature key.
 * With `resume`, an intact file whose last rows are not yet signed (a writer that stopped without
 * closing it) passes, so that a writer can carry on from `end`.
 */
export function verifyTamperEvident(
  text: string,
  chain: ChainState,
  verifyingKey: KeyObject,
  options: { format?: CsvFormat; resume?: boolean } = {},
): Verification & { end?: ChainEnd } {
  const fail = (problem: string, row?: number) => failure(true, problem, row);
  const format = options.format ?? DEFAULT_FORMAT;
  if (text === '') {
    return sameBytes(chain.currentKey, chain.initialKey)
      ? { ok: true, tamperEvident: true, rows: 0, signatures: 0 }
      : fail('the file is empty, and its keystore says rows were written: its content was removed');
  }
  const read = readRows(text, format);
  if ('problem' in read) return fail(read.problem, read.row);
  // A last row cut short is named once the rows before it are checked.
  const { rows, whole } = read;
  const header = read.header.cells.map((cell) => cell ?? '');
  const width = header.length;
  if (header[width - 2] !== HMAC_COLUMN || header[width - 1] !== SIGNATURE_COLUMN) {
    return fail(`the header does not end with the ${HMAC_COLUMN} and ${SIGNATURE_COLUMN} columns`, 1);
  }
  const where = (index: number) => describeRow(index + 2, rows[index]!.line);
  let key = chain.initialKey;
  let keyIndex = 0;
  let lastHmac: string | undefined;
  let lastSignature: Buffer | undefined;
  let signatures = 0;
  let dataRows = 0;
  let unsigned = 0;
  /** Chain keys already used, newest last, to recognise a row that was moved down. */
  const recentKeys: Buffer[] = [];
  for (let i = 0; i < whole; i++) {
    const cells = rows[i]!.cells;
    if (cells.length !== width) {
      return fail(`${where(i)} has ${cells.length} cells where the header has ${width}`, i + 2);
    }
    const signature = cells[width - 1];
    const hmac = cells[width - 2];
    if (signature !== undefined) {
      const bytes = Buffer.from(signature, 'base64');
      if (i === 0 && hmac === undefined && cells.slice(0, width - 2).every((c) => c === undefined)) {
        // The first row of a rotated file: the last signature of the file before it, which the next
        // signature of this one covers.
        lastSignature = bytes;
        signatures++;
        continue;
      }
      if (
        lastHmac === undefined ||
        !signatureMatches(signedData(lastHmac, lastSignature), bytes, verifyingKey)
      ) {
        return fail(
          lastHmac === undefined
            ? `${where(i)} is a signature with no row before it to sign`
            : `${where(i)} holds a signature that does not match the rows before it: one of them was removed, or the signature was altered`,
          i + 2,
        );
      }
      lastSignature = bytes;
      signatures++;
      unsigned = 0;
      continue;
    }
    const values = cells.slice(0, width - 2);
    if (hmac !== undefined && rowHmac(key, values) === hmac) {
      recentKeys.push(key);
      if (recentKeys.length > SEARCH) recentKeys.shift();
      key = nextKey(key);
      keyIndex++;
      lastHmac = hmac;
      dataRows++;
      unsigned++;
      continue;
    }
    return fail(explainBrokenRow(rows, i, width, key, recentKeys, where), i + 2);
  }
  if (whole < rows.length) {
    return fail(`the file ends in the middle of ${where(whole)}: it was cut short`, whole + 2);
  }
  const end: ChainEnd = {
    header: header.slice(0, width - 2),
    key,
    lastHmac,
    lastSignature,
    unsignedRows: unsigned,
    rows: dataRows,
  };
  if (!sameBytes(key, chain.currentKey)) {
    // The keystore's key is the chain's key after the last signed row: further along than this file
    // goes means rows were cut from its end.
    let ahead = nextKey(key);
    for (let missing = 1; missing <= SEARCH; missing++, ahead = nextKey(ahead)) {
      if (sameBytes(ahead, chain.currentKey)) {
        return fail(
          `the file ends early: ${missing} row${missing === 1 ? ' was' : 's were'} removed from its end (its keystore counts ${keyIndex + missing} rows, the file holds ${keyIndex})`,
        );
      }
    }
    // Behind: the keystore was saved at the last signature; the rows after it are checked above.
    let behind = chain.initialKey;
    for (let at = 0; at <= keyIndex; at++, behind = nextKey(behind)) {
      if (sameBytes(behind, chain.currentKey)) {
        if (options.resume) return { ok: true, tamperEvident: true, rows: dataRows, signatures, end };
        return fail(
          `the last ${keyIndex - at} row${keyIndex - at === 1 ? ' is' : 's are'} not signed: the file was not closed (the gateway stopped before its final signature) or its last signature row was removed`,
        );
      }
    }
    return fail("the file's keystore does not belong to this file (its key chain matches no row)");
  }
  if (unsigned > 0 && !options.resume) {
    return fail(
      `the last ${unsigned} row${unsigned === 1 ? ' is' : 's are'} not signed: its final signature row was removed`,
    );
  }
  return { ok: true, tamperEvident: true, rows: dataRows, signatures, end };
}

/**
 * Tells why row `i` breaks the chain: rows removed before it (it fits a key further on), moved (it
 * fits a key already used, or a later row fits here), inserted (the next row fits here), or altered.
 */
function explainBrokenRow(
  rows: readonly ParsedRow[],
  i: number,
  width: number,
  key: Buffer,
  recentKeys: readonly Buffer[],
  where: (index: number) => string,
): string {
  const fits = (index: number, k: Buffer) => {
    const cells = rows[index]?.cells;
    if (cells === undefined || cells.length !== width || cells[width - 2] === undefined) return false;
    return rowHmac(k, cells.slice(0, width - 2)) === cells[width - 2];
  };
  let ahead = nextKey(key);
  for (let skipped = 1; skipped <= SEARCH; skipped++, ahead = nextKey(ahead)) {
    if (!fits(i, ahead)) continue;
    // It belongs further on: rows before it were removed, unless the rows it skipped come after it.
    for (let j = i + 1; j < rows.length && j <= i + SEARCH; j++) {
      if (fits(j, key)) {
        return `${where(i)} is out of order: it was written ${skipped} row${skipped === 1 ? '' : 's'} later than it stands`;
      }
    }
    return `${skipped} row${skipped === 1 ? ' was' : 's were'} removed before ${where(i)}`;
  }
  for (let back = recentKeys.length - 1; back >= 0; back--) {
    if (fits(i, recentKeys[back]!)) {
      const distance = recentKeys.length - back;
      return `${where(i)} was inserted: it repeats or moves the row written ${distance} row${distance === 1 ? '' : 's'} earlier`;
    }
  }
  for (let j = i + 1; j < rows.length && j <= i + SEARCH; j++) {
    if (!fits(j, key)) continue;
    return j === i + 1
      ? `${where(i)} was inserted: the row after it continues the chain`
      : `${where(i)} is out of order: the row written here stands ${j - i} rows further down`;
  }
  return `${where(i)} was altered: its HMAC does not match its values`;
}

function failure(tamperEvident: boolean, problem: string, row?: number) {
  return { ok: false, tamperEvident, problem, ...(row === undefined ? {} : { row }) } as const;
}

/**
 * A file's rows after its header, and how many of them are whole (a last row cut short is not);
 * or what makes the text unreadable.
 */
function readRows(
  text: string,
  format: CsvFormat,
): { header: ParsedRow; rows: ParsedRow[]; whole: number } | { problem: string; row?: number } {
  let parsed: { rows: ParsedRow[]; complete: boolean };
  try {
    parsed = parseCsv(text, format);
  } catch (error) {
    if (error instanceof CsvSyntaxError)
      return { problem: `line ${error.line} is not CSV: ${error.message}` };
    throw error;
  }
  const [header, ...rows] = parsed.rows;
  if (header === undefined || (!parsed.complete && rows.length === 0)) {
    return { problem: 'the file ends in the middle of its header: it was cut short', row: 1 };
  }
  return { header, rows, whole: parsed.complete ? rows.length : rows.length - 1 };
}

function describeRow(row: number, line: number): string {
  return row === line ? `row ${row}` : `row ${row} (line ${line})`;
}

/** Checks a plain file's form: its header, rows of as many cells, a last row that ends. */
export function verifyPlain(text: string, options: { format?: CsvFormat } = {}): Verification {
  const fail = (problem: string, row?: number) => failure(false, problem, row);
  if (text === '') return { ok: true, tamperEvident: false, rows: 0, signatures: 0 };
  const read = readRows(text, options.format ?? DEFAULT_FORMAT);
  if ('problem' in read) return fail(read.problem, read.row);
  const { rows, whole } = read;
  const width = read.header.cells.length;
  for (let i = 0; i < whole; i++) {
    if (rows[i]!.cells.length !== width) {
      return fail(
        `${describeRow(i + 2, rows[i]!.line)} has ${rows[i]!.cells.length} cells where the header has ${width}`,
        i + 2,
      );
    }
  }
  if (whole < rows.length) {
    return fail(
      `the file ends in the middle of ${describeRow(whole + 2, rows[whole]!.line)}: it was cut short`,
      whole + 2,
    );
  }
  return { ok: true, tamperEvident: false, rows: rows.length, signatures: 0 };
}

/** Whether a file's header says it is tamper-evident (its last columns are HMAC and SIGNATURE). */
export function isTamperEvidentHeader(header: readonly (string | undefined)[]): boolean {
  return header.at(-2) === HMAC_COLUMN && header.at(-1) === SIGNATURE_COLUMN;
}

/**
 * Checks a CSV audit file as `portico audit verify` does: a tamper-evident one (its header ends with
 * HMAC and SIGNATURE) with `keys` and its companion keystore `<file>.keystore`; a plain one for form.
 * Throws `VerificationUsageError` when a tamper-evident file comes without keys.
 */
export function verifyCsvFile(
  file: string,
  options: { keys?: Pick<TamperEvidenceKeys, 'password' | 'verifyingKey'>; format?: CsvFormat } = {},
): Verification {
  const text = readFileSync(file, 'utf8');
  const format = options.format ?? DEFAULT_FORMAT;
  let first: ParsedRow | undefined;
  try {
    first = parseCsv(text.slice(0, text.search(/\r|\n/) + 1 || undefined), format).rows[0];
  } catch {
    first = undefined;
  }
  const tamperEvident =
    (first !== undefined && isTamperEvidentHeader(first.cells)) ||
    (text === '' && file.endsWith('.csv') && /tamper-evident-/.test(file));
  if (!tamperEvident) return verifyPlain(text, { format });
  if (options.keys === undefined) {
    throw new VerificationUsageError(
      `${file} is tamper-evident: give the keystore that signed it (--keystore FILE --password PW)`,
    );
  }
  let chain: ChainState;
  try {
    chain = readCompanion(file + COMPANION_ENDING, companionPassword(options.keys));
  } catch (error) {
    return {
      ok: false,
      tamperEvident: true,
      problem: `its keystore ${file + COMPANION_ENDING} cannot be read with these keys: ${error instanceof Error ? error.message : String(error)}`,
    };
  }
  const { end: _end, ...verification } = verifyTamperEvident(text, chain, options.keys.verifyingKey, {
    format,
  });
  return verification;
}
