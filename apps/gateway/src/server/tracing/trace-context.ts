import { randomFillSync } from 'node:crypto';

/**
 * The W3C trace context a span carries and propagates (traceparent, tracestate), parsed and formed
 * by hand: a traceparent is 55 characters of fixed shape, checked in one pass without a regex.
 */
export interface TraceContext {
  /** 32 lowercase hex digits, not all zero. */
  readonly traceId: string;
  /** 16 lowercase hex digits, not all zero. */
  readonly spanId: string;
  readonly sampled: boolean;
  /** The tracestate received with it, when it was well-formed. */
  readonly traceState: string | undefined;
}

/** W3C Trace Context: at most 32 list members, and vendors may drop a longer header than 512 characters. */
const MAX_TRACESTATE_LENGTH = 512;
const MAX_TRACESTATE_MEMBERS = 32;

/**
 * A `traceparent` field's context, or undefined when it is absent or malformed (then the request
 * starts a trace of its own). Version 00 is exactly `00-<32 hex>-<16 hex>-<2 hex>`; a later version
 * may append fields after a `-`, and `ff` is invalid. Hex must be lowercase; all-zero ids are invalid.
 */
export function parseTraceparent(
  value: string | undefined,
  tracestate: string | undefined,
): TraceContext | undefined {
  if (value === undefined || value.length < 55) return undefined;
  if (!isHex(value, 0, 2) || value.startsWith('ff')) return undefined;
  if (value.charCodeAt(2) !== DASH || value.charCodeAt(35) !== DASH || value.charCodeAt(52) !== DASH)
    return undefined;
  if (value.length > 55 && (value.startsWith('00') || value.charCodeAt(55) !== DASH)) return undefined;
  if (!isHex(value, 3, 35) || !isHex(value, 36, 52) || !isHex(value, 53, 55)) return undefined;
  const traceId = value.slice(3, 35);
  const spanId = value.slice(36, 52);
  if (isZero(traceId) || isZero(spanId)) return undefined;
  const flags = Number.parseInt(value.slice(53, 55), 16);
  return { traceId, spanId, sampled: (flags & 1) === 1, traceState: wellFormedTracestate(tracestate) };
}

/** The `traceparent` value that carries this context on. */
export function formatTraceparent(traceId: string, spanId: string, sampled: boolean): string {
  return `00-${traceId}-${spanId}-${sampled ? '01' : '00'}`;
}

const DASH = 0x2d;

function isHex(text: string, from: number, to: number): boolean {
  for (let i = from; i < to; i++) {
    const c = text.charCodeAt(i);
    if (!((c >= 0x30 && c <= 0x39) || (c >= 0x61 && c <= 0x66))) return false;
  }
  return true;
}

function isZero(hex: string): boolean {
  for (let i = 0; i < hex.length; i++) if (hex.charCodeAt(i) !== 0x30) return false;
  return true;
}

/**
 * A tracestate passed on as it came when it is printable, at most 512 characters and 32 members,
 * without empty members; dropped otherwise (the W3C recommendation for one that cannot be parsed).
 */
function wellFormedTracestate(value: string | undefined): string | undefined {
  if (value === undefined || value.length === 0 || value.length > MAX_TRACESTATE_LENGTH) return undefined;
  let members = 1;
  for (let i = 0; i < value.length; i++) {
    const c = value.charCodeAt(i);
    if (c < 0x20 || c > 0x7e) return undefined;
    if (c === 0x2c) members++;
  }
  if (members > MAX_TRACESTATE_MEMBERS) return undefined;
  for (const member of value.split(',')) if (!member.includes('=')) return undefined;
  return value;
}

/**
 * Random span and trace ids, cut from a pool of random bytes refilled 4 KB at a time: one
 * `randomFillSync` per 170 spans rather than one per id.
 */
export class IdSource {
  readonly #pool = Buffer.alloc(4096);
  #at = this.#pool.length;

  traceId(): string {
    return this.#hex(16);
  }

  spanId(): string {
    return this.#hex(8);
  }

  #hex(bytes: number): string {
    for (;;) {
      if (this.#at + bytes > this.#pool.length) {
        randomFillSync(this.#pool);
        this.#at = 0;
      }
      const id = this.#pool.toString('hex', this.#at, this.#at + bytes);
      this.#at += bytes;
      if (!isZero(id)) return id;
    }
  }
}

/**
 * Whether a trace that starts here is kept: `ratio` of them, decided by the trace id's last eight
 * hex digits (random), so every process that sees the id decides alike.
 */
export function sampledByRatio(traceId: string, ratio: number): boolean {
  if (ratio >= 1) return true;
  if (ratio <= 0) return false;
  return Number.parseInt(traceId.slice(24), 16) / 0x1_0000_0000 < ratio;
}
