import { Readable } from 'node:stream';
import { brandClass } from '../brand.ts';
import { ErrorCode, PorticoError } from '../errors.ts';
import { EL_GET, EL_SET, type ElObject } from '../expression/access.ts';
import { toText } from '../expression/coercion.ts';
import type { BodySource } from './body-source.ts';
import { decodeStrictly } from './percent-decoding.ts';
import type { StoredBody, TemporaryStorage } from './temporary-storage.ts';

/** Default bound on a body read into memory (a filter that needs the whole body); 413 past it. */
export const DEFAULT_MAX_BUFFERED_BYTES = 10 * 1024 * 1024;

export type EntityContent = Readable | Uint8Array | string | null;

/**
 * How the response writer takes a body source that nothing has read (then it is the writer's to
 * send): internal to the core, which is why it is a symbol and not a method.
 */
export const TAKE_SOURCE: unique symbol = Symbol('portico.entity.takeSource');

/**
 * A message body. It streams by default: an untouched body goes from one side to the other without
 * being copied. Reading it as bytes, text, JSON or a form buffers it once, bounded by `maxBytes`,
 * and keeps it replayable, so a filter can read it and the next handler still receives it.
 * In expressions, `request.entity.string`, `.json` and `.form` read a body that a filter has
 * buffered; an unread stream gives null there, since expressions never wait.
 */
export class Entity implements ElObject {
  #stream: Readable | null = null;
  /** A body its producer hands over directly (BodySource), until something reads it as a stream. */
  #source: BodySource | null = null;
  /** Whether the stream is a body source's (an upstream's), which may be destroyed to free its connection. */
  #fromSource = false;
  #bytes: Buffer | null = null;
  #consumed = false;
  #buffering: Promise<Buffer> | null = null;
  #stored: StoredBody | null = null;
  /** The declared length (Content-Length) of a stream, when known. */
  declaredLength: number | undefined;
  /** The bound `bytes()` and friends apply when called without one (the server's maxBufferedBodySize). */
  maxBytes: number;

  constructor(content: EntityContent = null, declaredLength?: number, options: { maxBytes?: number } = {}) {
    this.declaredLength = declaredLength;
    this.maxBytes = options.maxBytes ?? DEFAULT_MAX_BUFFERED_BYTES;
    this.setContent(content);
  }

  /**
   * A body from a producer that can write its chunks directly (`BodySource`), such as the upstream
   * client's: it stays a source until something reads it, and is then read like any stream.
   */
  static fromSource(
    source: BodySource,
    declaredLength?: number,
    options: { maxBytes?: number } = {},
  ): Entity {
    const entity = new Entity(null, declaredLength, options);
    entity.#source = source;
    entity.declaredLength = declaredLength;
    return entity;
  }

  setContent(content: EntityContent): void {
    // A source replaced unread is let go of, so that its connection is freed.
    if (this.#source) {
      this.#source.discard();
      this.#source = null;
    }
    this.#consumed = false;
    this.#fromSource = false;
    this.#buffering = null;
    void this.#stored?.dispose();
    this.#stored = null;
    if (content instanceof Readable) {
      this.#stream = content;
      this.#bytes = null;
    } else {
      this.#stream = null;
      this.#bytes =
        content === null
          ? null
          : typeof content === 'string'
            ? Buffer.from(content, 'utf8')
            : Buffer.from(content);
      this.declaredLength = this.#bytes?.length;
    }
  }

  /** True when there is certainly no body. */
  get isEmpty(): boolean {
    if (this.#bytes) return this.#bytes.length === 0;
    if (this.#source) return this.declaredLength === 0;
    return this.#stream === null || this.declaredLength === 0;
  }

  get isBuffered(): boolean {
    return this.#bytes !== null || this.#stored !== null || (this.#stream === null && this.#source === null);
  }

  /** The length when it is known: buffered, or declared by the sender. */
  get length(): number | undefined {
    if (this.#bytes) return this.#bytes.length;
    if (this.#stored) return this.#stored.length;
    return this.#stream || this.#source ? this.declaredLength : 0;
  }

  /**
   * The body as a stream, for writing it out. A streamed body can be taken once; a buffered one
   * gives a fresh stream each time.
   */
  stream(): Readable | null {
    if (this.#bytes) return Readable.from([this.#bytes]);
    if (this.#stored) return this.#stored.stream();
    this.#sourceToStream();
    // (A source taken or dropped leaves no stream, but the body is gone all the same.)
    if (this.#consumed) throw new Error('the entity stream was already consumed');
    if (!this.#stream) return null;
    this.#consumed = true;
    return this.#stream;
  }

  /** The raw source stream when the body has not been buffered (for piping without copies). */
  get unbufferedStream(): Readable | null {
    this.#sourceToStream();
    return this.#bytes || this.#stored ? null : this.#stream;
  }

  /** Reads the whole body into memory once; later calls return the same bytes. */
  async bytes(maxBytes = this.maxBytes): Promise<Buffer> {
    if (this.#bytes) return this.#bytes;
    if (this.#stored) {
      if (this.#stored.length > maxBytes) throw entityTooLarge(maxBytes);
      this.#bytes = await this.#readAll(this.#stored.stream(), maxBytes);
      return this.#bytes;
    }
    this.#sourceToStream();
    if (!this.#stream) return EMPTY;
    if (this.#consumed && !this.#buffering) throw new Error('the entity stream was already consumed');
    this.#buffering ??= this.#readAll(this.#stream, maxBytes);
    this.#consumed = true;
    try {
      this.#bytes = await this.#buffering;
    } catch (error) {
      // An upstream's body that will not be read: its connection is let go of now, not once the
      // upstream's silence runs out (a client's body stays open, to carry the 413).
      if (this.#fromSource) this.#stream.destroy();
      throw error;
    }
    this.declaredLength = this.#bytes.length;
    return this.#bytes;
  }

  /**
   * Reads a stream to its end. Past the bound it stops reading without destroying the stream: the
   * source may be the client's connection, which must stay open to carry the 413.
   */
  async #readAll(stream: Readable, maxBytes: number): Promise<Buffer> {
    if (this.declaredLength !== undefined && this.declaredLength > maxBytes) throw entityTooLarge(maxBytes);
    return collect(stream, maxBytes);
  }

  async text(maxBytes?: number): Promise<string> {
    return (await this.bytes(maxBytes)).toString('utf8');
  }

  async json(maxBytes?: number): Promise<unknown> {
    const text = await this.text(maxBytes);
    return text.length === 0 ? null : JSON.parse(text);
  }

  /** An `application/x-www-form-urlencoded` body as name → values. */
  async form(maxBytes?: number): Promise<Record<string, string[]>> {
    return parseForm(await this.text(maxBytes));
  }

  /**
   * Makes a streamed body readable any number of times without holding it in memory: it is read to
   * its end through the temporary storage (memory first, then a file). Bytes already buffered stay.
   */
  async buffer(storage: TemporaryStorage): Promise<void> {
    this.#sourceToStream();
    if (this.#bytes || this.#stored || !this.#stream) return;
    if (this.#consumed) throw new Error('the entity stream was already consumed');
    this.#consumed = true;
    this.#stored = await storage.store(this.#stream);
    this.declaredLength = this.#stored.length;
  }

  /** True when a temporary storage holds the body. */
  get isStored(): boolean {
    return this.#stored !== null;
  }

  /** Releases what holds the body (a spill file); the server calls it once the exchange is over. */
  /** Removes a spill file, if the body was stored in one (nothing to wait for otherwise). */
  dispose(): Promise<void> | undefined {
    return this.#stored?.dispose();
  }

  /** Discards an unread stream so its connection can be reused. */
  discard(): void {
    if (this.#source) {
      this.#consumed = true;
      this.#source.discard();
      this.#source = null;
      return;
    }
    if (this.#stream && !this.#consumed && !this.#bytes) {
      this.#consumed = true;
      this.#stream.resume();
    }
  }

  [EL_GET](key: string): unknown {
    const bytes = this.#bytes ?? (this.#stream || this.#source ? null : EMPTY);
    if (bytes === null) return undefined;
    switch (key) {
      case 'string':
        return bytes.toString('utf8');
      case 'bytes':
        return bytes;
      case 'json':
        try {
          return bytes.length === 0 ? null : JSON.parse(bytes.toString('utf8'));
        } catch {
          return undefined;
        }
      case 'form':
        return parseForm(bytes.toString('utf8'));
      case 'length':
        return bytes.length;
      default:
        return undefined;
    }
  }

  [EL_SET](key: string, value: unknown): void {
    if (key === 'string') this.setContent(value === null || value === undefined ? null : toText(value));
    else if (key === 'json')
      this.setContent(value === null || value === undefined ? null : JSON.stringify(value));
  }

  toString(): string {
    return this.#bytes ? this.#bytes.toString('utf8') : this.#stream || this.#source ? '[stream]' : '';
  }

  /**
   * The source of a body nothing has read, handed to the caller, who sends it (the response writer):
   * the entity then counts as consumed. Undefined when the body is anything else.
   */
  [TAKE_SOURCE](): BodySource | undefined {
    const source = this.#source;
    if (source === null) return undefined;
    this.#source = null;
    this.#consumed = true;
    return source;
  }

  /** From here on the body is an ordinary stream. */
  #sourceToStream(): void {
    if (this.#source === null) return;
    this.#stream = this.#source.readable();
    this.#fromSource = true;
    this.#source = null;
  }
}

const EMPTY = Buffer.alloc(0);

async function collect(stream: Readable, maxBytes: number): Promise<Buffer> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of stream.iterator({ destroyOnReturn: false })) {
    const buffer = typeof chunk === 'string' ? Buffer.from(chunk) : (chunk as Buffer);
    size += buffer.length;
    if (size > maxBytes) throw entityTooLarge(maxBytes);
    chunks.push(buffer);
  }
  return Buffer.concat(chunks, size);
}

export function entityTooLarge(maxBytes: number): PorticoError {
  return new PorticoError(ErrorCode.ENTITY_TOO_LARGE, `the body is larger than ${maxBytes} bytes`, {
    expected: `a body of at most ${maxBytes} bytes`,
  });
}

/** Form decoding: `+` is a space, names and values percent-decoded, repeated names collected. */
export function parseForm(text: string): Record<string, string[]> {
  const out: Record<string, string[]> = Object.create(null);
  if (!text) return out;
  for (const pair of text.split('&')) {
    if (!pair) continue;
    const eq = pair.indexOf('=');
    const name = formDecode(eq < 0 ? pair : pair.slice(0, eq));
    const value = eq < 0 ? '' : formDecode(pair.slice(eq + 1));
    (out[name] ??= []).push(value);
  }
  return out;
}

function formDecode(text: string): string {
  const spaced = text.replace(/\+/g, ' ');
  // A field that does not decode is kept as it came.
  return decodeStrictly(spaced) ?? spaced;
}

// Objects of these classes cross package boundaries (plugins make and read them): one identity for
// every copy of the core (brand.ts).
brandClass(Entity, 'Entity');
