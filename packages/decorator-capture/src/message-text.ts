import type { Headers, Request, Response } from '@portico/gateway-core';
import { Status } from '@portico/gateway-core/http-helpers';
import type { BodySample } from './entity-capture.ts';

/** The marker written instead of a body that is not text. */
export const BINARY_ENTITY = '[binary entity]';

/** What capture writes in place of secrets: header values and attributes whose names match. */
export interface CaptureMasks {
  /** Header names whose values are masked (cookies: each value, the names and attributes kept). */
  headers: readonly RegExp[];
  /** Names of attributes (the attributes context) whose values are masked. */
  attributes: readonly RegExp[];
  mask: string;
}

export const NO_MASKS: CaptureMasks = { headers: [], attributes: [], mask: '' };

const named = (patterns: readonly RegExp[], name: string) => patterns.some((p) => p.test(name));

/** `GET http://app/path?q HTTP/1.1`, then the headers, one line per value. */
export function requestHead(request: Request, masks: CaptureMasks = NO_MASKS): string {
  return `${request.method} ${request.uri.toString()} ${request.version}\n${headerLines(request.headers, masks)}`;
}

/** `HTTP/1.1 200 OK`, then the headers, one line per value. */
export function responseHead(response: Response, masks: CaptureMasks = NO_MASKS): string {
  const status = new Status(response.status, response.reason);
  return `${response.version} ${status.code} ${status.reasonPhrase}\n${headerLines(response.headers, masks)}`;
}

function headerLines(headers: Headers, masks: CaptureMasks): string {
  const lines: string[] = [];
  for (const [name, values] of headers) {
    const masked = named(masks.headers, name);
    for (const value of values)
      lines.push(`${name}: ${masked ? maskedValue(name, value, masks.mask) : value}`);
  }
  return lines.join('\n');
}

/** The mask for a value; a cookie header keeps its cookie names (and Set-Cookie its attributes). */
function maskedValue(name: string, value: string, mask: string): string {
  const header = name.toLowerCase();
  const pair = (part: string) => {
    const eq = part.indexOf('=');
    return eq < 0 ? mask : `${part.slice(0, eq)}=${mask}`;
  };
  if (header === 'cookie') return value.split(';').map(pair).join(';');
  if (header === 'set-cookie') {
    const semicolon = value.indexOf(';');
    return semicolon < 0 ? pair(value) : `${pair(value.slice(0, semicolon))}${value.slice(semicolon)}`;
  }
  return mask;
}

const TEXT_TYPES =
  /^(text\/|application\/([\w.+-]*\+)?(json|xml)$|application\/(javascript|ecmascript|x-www-form-urlencoded|graphql|yaml|x-yaml|x-ndjson|jwt|sql)$|image\/svg\+xml$|message\/http$)/;

/**
 * The body as text, or the binary marker. The Content-Type decides (a text type, or any type with a
 * charset); without one, bytes that decode as UTF-8 with no control characters count as text. A
 * compressed body (Content-Encoding) is binary.
 */
export function bodyText(headers: Headers, sample: BodySample): string {
  if (sample.length === 0 && sample.complete) return '';
  const encoding = headers.get('content-encoding')?.trim().toLowerCase();
  if (encoding && encoding !== 'identity') return BINARY_ENTITY;
  const contentType = headers.get('content-type');
  let text: string | undefined;
  if (contentType !== undefined) {
    const [mediaType = '', ...parameters] = contentType.split(';').map((part) => part.trim());
    const charset = parameters
      .find((p) => /^charset=/i.test(p))
      ?.slice(8)
      .replace(/^"|"$/g, '');
    if (charset === undefined && !TEXT_TYPES.test(mediaType.toLowerCase())) return BINARY_ENTITY;
    text = decoderFor(charset).decode(sample.bytes);
  } else {
    text = guessedText(sample.bytes, sample.bytes.length < (sample.length ?? Number.POSITIVE_INFINITY));
    if (text === undefined) return BINARY_ENTITY;
  }
  return `${text}${truncation(sample)}`;
}

/** A decoder for the charset named (UTF-8 when none, or one this runtime does not know). */
function decoderFor(charset: string | undefined): InstanceType<typeof TextDecoder> {
  try {
    return new TextDecoder(charset ?? 'utf-8');
  } catch {
    return new TextDecoder('utf-8');
  }
}

/** UTF-8 text without control characters, or undefined; a sample cut short may end mid-character. */
function guessedText(bytes: Buffer, cut: boolean): string | undefined {
  let text: string;
  try {
    text = new TextDecoder('utf-8', { fatal: true }).decode(bytes, { stream: cut });
  } catch {
    return undefined;
  }
  // biome-ignore lint/suspicious/noControlCharactersInRegex: control characters are what is looked for.
  return /[\u0000-\u0008\u000e-\u001f\u007f]/.test(text) ? undefined : text;
}

function truncation(sample: BodySample): string {
  if (!sample.complete) return `\n[entity incomplete: ${sample.bytes.length} bytes captured before it ended]`;
  if (sample.length !== undefined && sample.length > sample.bytes.length) {
    return `\n[entity truncated: ${sample.bytes.length} of ${sample.length} bytes shown]`;
  }
  return '';
}

/**
 * Named contexts as JSON, for reading: class instances without `toJSON` (a socket) are written by
 * their class name, byte arrays by their length, cycles as `[circular]`, masked attributes as the mask.
 */
export function contextJson(
  contexts: Readonly<Record<string, unknown>>,
  masks: CaptureMasks = NO_MASKS,
): string {
  const ancestors: unknown[] = [];
  const attributes = (contexts.attributes as { attributes?: unknown } | undefined)?.attributes;
  return JSON.stringify(
    contexts,
    function replacer(this: unknown, key: string, value: unknown) {
      if (this === attributes && named(masks.attributes, key)) return masks.mask;
      if (typeof value === 'bigint') return value.toString();
      if (typeof value === 'function' || typeof value === 'symbol') return undefined;
      if (value === null || typeof value !== 'object') return value;
      if (value instanceof Uint8Array) return `[${value.length} bytes]`;
      while (ancestors.length > 0 && ancestors.at(-1) !== this) ancestors.pop();
      if (ancestors.includes(value)) return '[circular]';
      const prototype = Object.getPrototypeOf(value);
      const plain = prototype === Object.prototype || prototype === null || Array.isArray(value);
      if (!plain && typeof (value as { toJSON?: unknown }).toJSON !== 'function') {
        return `[${(value as object).constructor?.name ?? 'object'}]`;
      }
      ancestors.push(value);
      return value;
    },
    2,
  );
}
