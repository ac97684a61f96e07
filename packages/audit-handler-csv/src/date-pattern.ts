/**
 * The date patterns `rotationFileSuffix` is written in: Java's (`-yyyy.MM.dd-HH.mm.ss`). Letters are
 * fields, text in single quotes is literal (`''` is a quote), anything else is itself. Dates are
 * written in the local time zone, as the incumbents name their history files.
 */

export const DEFAULT_SUFFIX = '-yyyy.MM.dd-HH.mm.ss';

const MONTHS = [
  'January',
  'February',
  'March',
  'April',
  'May',
  'June',
  'July',
  'August',
  'September',
  'October',
  'November',
  'December',
];
const DAYS = ['Sunday', 'Monday', 'Tuesday', 'Wednesday', 'Thursday', 'Friday', 'Saturday'];

type Part = { literal: string } | { field: string; count: number };

/** The letters a pattern may use: year, month, day, day name, hours, minutes, seconds, fraction, AM/PM. */
const FIELDS = new Set(['y', 'M', 'd', 'E', 'H', 'h', 'k', 'K', 'm', 's', 'S', 'a']);

/** A pattern that cannot be read: its letters are not date fields, or a quote is never closed. */
export class DatePatternError extends Error {}

/** A parsed pattern: formats dates, and matches the names it makes. */
export class DatePattern {
  readonly source: string;
  readonly #parts: Part[];
  readonly regex: string;

  constructor(source: string) {
    this.source = source;
    this.#parts = parse(source);
    this.regex = this.#parts.map(partRegex).join('');
  }

  format(time: number): string {
    const date = new Date(time);
    let out = '';
    for (const part of this.#parts) out += 'literal' in part ? part.literal : field(date, part);
    return out;
  }
}

function parse(source: string): Part[] {
  const parts: Part[] = [];
  let i = 0;
  while (i < source.length) {
    const c = source[i]!;
    if (c === "'") {
      if (source[i + 1] === "'") {
        parts.push({ literal: "'" });
        i += 2;
        continue;
      }
      let text = '';
      i++;
      for (;;) {
        if (i >= source.length) throw new DatePatternError(`a quote in '${source}' is never closed`);
        if (source[i] === "'") {
          if (source[i + 1] === "'") {
            text += "'";
            i += 2;
            continue;
          }
          i++;
          break;
        }
        text += source[i];
        i++;
      }
      parts.push({ literal: text });
    } else if (/[A-Za-z]/.test(c)) {
      if (!FIELDS.has(c)) throw new DatePatternError(`'${c}' in '${source}' is not a date field`);
      let count = 1;
      while (source[i + count] === c) count++;
      parts.push({ field: c, count });
      i += count;
    } else {
      parts.push({ literal: c });
      i++;
    }
  }
  return parts;
}

function pad(n: number, width: number): string {
  return String(n).padStart(width, '0');
}

function field(date: Date, part: { field: string; count: number }): string {
  const { count } = part;
  switch (part.field) {
    case 'y':
      return count === 2 ? pad(date.getFullYear() % 100, 2) : pad(date.getFullYear(), count);
    case 'M':
      return count >= 4
        ? MONTHS[date.getMonth()]!
        : count === 3
          ? MONTHS[date.getMonth()]!.slice(0, 3)
          : pad(date.getMonth() + 1, count);
    case 'd':
      return pad(date.getDate(), count);
    case 'E':
      return count >= 4 ? DAYS[date.getDay()]! : DAYS[date.getDay()]!.slice(0, 3);
    case 'H':
      return pad(date.getHours(), count);
    case 'k':
      return pad(date.getHours() === 0 ? 24 : date.getHours(), count);
    case 'K':
      return pad(date.getHours() % 12, count);
    case 'h':
      return pad(date.getHours() % 12 === 0 ? 12 : date.getHours() % 12, count);
    case 'm':
      return pad(date.getMinutes(), count);
    case 's':
      return pad(date.getSeconds(), count);
    case 'S':
      return pad(date.getMilliseconds(), 3).padEnd(count, '0').slice(0, count);
    default:
      return date.getHours() < 12 ? 'AM' : 'PM';
  }
}

/** `text` as a regular expression that matches it and nothing else. */
export function escapeRegex(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\/-]/g, '\\$&');
}

function partRegex(part: Part): string {
  if ('literal' in part) return escapeRegex(part.literal);
  const textual = (part.field === 'M' && part.count >= 3) || part.field === 'E' || part.field === 'a';
  return textual ? '[A-Za-z]+' : `\\d{${part.count},}`;
}
