import { ErrorCode, PorticoError } from '../errors.ts';

/**
 * Reads configuration files. Real route files written for the incumbents are not always strict
 * JSON: they carry `//` and `/* *\/` comments, trailing commas, line breaks inside strings,
 * backslashes before ordinary characters (regular expressions such as `\s`) and stray blanks such as
 * a no-break space after the closing brace. The incumbents' parser accepts them, so this one does,
 * and reports anything else with the file, line and column.
 */
export function parseConfigJson(text: string, file?: string): unknown {
  return new JsonReader(text, file).readDocument();
}

/**
 * How deeply objects and arrays may nest. Real configurations stay far below (a route nests a few
 * dozen levels); the bound keeps reading, and every later walk over the value (tokens, schemas,
 * heap objects), well within the stack, so that a hostile file is refused with a clear message
 * instead of a stack overflow.
 */
export const MAX_JSON_NESTING = 512;

/**
 * Whether a value already in memory (not read by parseConfigJson) nests objects and arrays deeper
 * than `max`: checked without recursion, so that a value too deep to stringify is refused before
 * JSON.stringify overflows the stack.
 */
export function nestsDeeperThan(value: unknown, max: number = MAX_JSON_NESTING): boolean {
  const pending: [unknown, number][] = [[value, 0]];
  for (let next = pending.pop(); next !== undefined; next = pending.pop()) {
    const [item, depth] = next;
    if (typeof item !== 'object' || item === null) continue;
    if (depth + 1 > max) return true;
    for (const child of Array.isArray(item) ? item : Object.values(item)) pending.push([child, depth + 1]);
  }
  return false;
}

const BLANK = /[\s\u00a0\ufeff]/;

class JsonReader {
  #i = 0;
  #depth = 0;
  readonly #text: string;
  readonly #file: string | undefined;

  constructor(text: string, file: string | undefined) {
    this.#text = text;
    this.#file = file;
  }

  readDocument(): unknown {
    this.#skip();
    const value = this.#readValue();
    this.#skip();
    if (this.#i < this.#text.length)
      throw this.#error('unexpected text after the end of the document', 'the end of the file');
    return value;
  }

  #error(message: string, expected: string): PorticoError {
    const before = this.#text.slice(0, this.#i);
    const line = before.split('\n').length;
    const column = this.#i - before.lastIndexOf('\n');
    // The file and the place are the error's details, which its toString() prints: not repeated here.
    return new PorticoError(ErrorCode.CONFIG, message, {
      ...(this.#file === undefined ? {} : { file: this.#file }),
      jsonPath: `line ${line}, column ${column}`,
      expected,
    });
  }

  /** Skips blanks and comments. */
  #skip(): void {
    const t = this.#text;
    while (this.#i < t.length) {
      const c = t[this.#i]!;
      if (BLANK.test(c)) {
        this.#i++;
      } else if (c === '/' && t[this.#i + 1] === '/') {
        const end = t.indexOf('\n', this.#i);
        this.#i = end < 0 ? t.length : end + 1;
      } else if (c === '/' && t[this.#i + 1] === '*') {
        const end = t.indexOf('*/', this.#i + 2);
        if (end < 0) throw this.#error('unclosed comment', "'*/'");
        this.#i = end + 2;
      } else {
        return;
      }
    }
  }

  #readValue(): unknown {
    const c = this.#text[this.#i];
    switch (c) {
      case '{':
      case '[': {
        if (++this.#depth > MAX_JSON_NESTING)
          throw this.#error(
            `objects and arrays nested more than ${MAX_JSON_NESTING} levels deep`,
            `at most ${MAX_JSON_NESTING} levels of nesting`,
          );
        const value = c === '{' ? this.#readObject() : this.#readArray();
        this.#depth--;
        return value;
      }
      case '"':
        return this.#readString();
      case 't':
        return this.#readWord('true', true);
      case 'f':
        return this.#readWord('false', false);
      case 'n':
        return this.#readWord('null', null);
      default:
        if (c === '-' || (c !== undefined && c >= '0' && c <= '9')) return this.#readNumber();
        throw this.#error(
          c === undefined ? 'unexpected end of file' : `unexpected character '${c}'`,
          'a JSON value',
        );
    }
  }

  #readWord<T>(word: string, value: T): T {
    if (!this.#text.startsWith(word, this.#i))
      throw this.#error('unexpected word', `'${word}' or another JSON value`);
    this.#i += word.length;
    return value;
  }

  #readNumber(): number {
    const match = /^-?(?:0|[1-9]\d*)(?:\.\d+)?(?:[eE][+-]?\d+)?/.exec(
      this.#text.slice(this.#i, this.#i + 400),
    );
    if (!match) throw this.#error('malformed number', 'a JSON number');
    this.#i += match[0].length;
    return Number(match[0]);
  }

  #readString(): string {
    const t = this.#text;
    // Slices and escaped characters, joined once: a string of many escapes stays linear in memory.
    const out: string[] = [];
    this.#i++;
    for (;;) {
      const start = this.#i;
      while (this.#i < t.length && t[this.#i] !== '"' && t[this.#i] !== '\\') this.#i++;
      out.push(t.slice(start, this.#i));
      if (this.#i >= t.length) throw this.#error('unterminated string', 'a closing quote');
      if (t[this.#i] === '"') {
        this.#i++;
        return out.join('');
      }
      const e = t[this.#i + 1];
      this.#i += 2;
      switch (e) {
        case '"':
        case '\\':
        case '/':
          out.push(e);
          break;
        case 'b':
          out.push('\b');
          break;
        case 'f':
          out.push('\f');
          break;
        case 'n':
          out.push('\n');
          break;
        case 'r':
          out.push('\r');
          break;
        case 't':
          out.push('\t');
          break;
        case 'u': {
          const hex = t.slice(this.#i, this.#i + 4);
          if (!/^[0-9a-fA-F]{4}$/.test(hex))
            throw this.#error('malformed \\u escape', 'four hexadecimal digits');
          out.push(String.fromCharCode(Number.parseInt(hex, 16)));
          this.#i += 4;
          break;
        }
        case undefined:
          throw this.#error('unterminated string', 'a closing quote');
        default:
          // Not a JSON escape: keep the backslash, as a regular expression would need it.
          out.push(`\\${e}`);
      }
    }
  }

  #readArray(): unknown[] {
    const out: unknown[] = [];
    this.#i++;
    for (;;) {
      this.#skip();
      if (this.#text[this.#i] === ']') {
        this.#i++;
        return out;
      }
      out.push(this.#readValue());
      this.#skip();
      const c = this.#text[this.#i];
      if (c === ',') this.#i++;
      else if (c !== ']')
        throw this.#error(
          c === undefined ? 'unexpected end of file' : `unexpected character '${c}'`,
          "',' or ']'",
        );
    }
  }

  #readObject(): Record<string, unknown> {
    const out: Record<string, unknown> = {};
    this.#i++;
    for (;;) {
      this.#skip();
      const c = this.#text[this.#i];
      if (c === '}') {
        this.#i++;
        return out;
      }
      if (c !== '"')
        throw this.#error(
          c === undefined ? 'unexpected end of file' : `unexpected character '${c}'`,
          "a quoted key or '}'",
        );
      const key = this.#readString();
      this.#skip();
      if (this.#text[this.#i] !== ':') throw this.#error(`missing ':' after key "${key}"`, "':'");
      this.#i++;
      this.#skip();
      const value = this.#readValue();
      // A key named __proto__ must become an ordinary property, never the object's prototype.
      Object.defineProperty(out, key, { value, enumerable: true, writable: true, configurable: true });
      this.#skip();
      const next = this.#text[this.#i];
      if (next === ',') this.#i++;
      else if (next !== '}')
        throw this.#error(
          next === undefined ? 'unexpected end of file' : `unexpected character '${next}'`,
          "',' or '}'",
        );
    }
  }
}
