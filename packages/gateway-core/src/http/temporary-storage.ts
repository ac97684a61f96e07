import { randomUUID } from 'node:crypto';
import { createReadStream } from 'node:fs';
import type { FileHandle } from 'node:fs/promises';
import { mkdir, open, rm } from 'node:fs/promises';
import path from 'node:path';
import { Readable } from 'node:stream';
import { ErrorCode, PorticoError } from '../errors.ts';

export interface TemporaryStorageSettings {
  /** Bytes kept in memory before the rest goes to a file. */
  memoryLimit: number;
  /** Largest body kept at all; past it the body is refused (413). */
  fileLimit: number;
  directory: string;
}

/**
 * Keeps a body that must be read more than once (captured, retried, inspected by a filter) without
 * holding it all in memory: the first `memoryLimit` bytes stay in memory, the rest is written to a
 * file in the temporary directory, which is removed when the body is disposed of.
 */
export class TemporaryStorage {
  readonly settings: TemporaryStorageSettings;

  constructor(settings: TemporaryStorageSettings) {
    this.settings = settings;
  }

  /** Reads a stream to its end into a replayable buffer. */
  async store(source: AsyncIterable<Buffer | string>): Promise<StoredBody> {
    const body = new StoredBody(this.settings);
    try {
      for await (const chunk of source)
        await body.append(typeof chunk === 'string' ? Buffer.from(chunk) : chunk);
      await body.seal();
      return body;
    } catch (error) {
      await body.dispose();
      throw error;
    }
  }
}

export class StoredBody {
  readonly #settings: TemporaryStorageSettings;
  readonly #memory: Buffer[] = [];
  #memoryBytes = 0;
  #file: { path: string; handle: FileHandle | undefined } | undefined;
  #fileBytes = 0;
  #disposed = false;

  constructor(settings: TemporaryStorageSettings) {
    this.#settings = settings;
  }

  get length(): number {
    return this.#memoryBytes + this.#fileBytes;
  }

  /** The path of the spill file, when part of the body is on disk. */
  get file(): string | undefined {
    return this.#file?.path;
  }

  async append(chunk: Buffer): Promise<void> {
    if (this.length + chunk.length > this.#settings.fileLimit) {
      throw new PorticoError(
        ErrorCode.ENTITY_TOO_LARGE,
        `the body is larger than ${this.#settings.fileLimit} bytes`,
        {
          expected: `a body of at most ${this.#settings.fileLimit} bytes`,
        },
      );
    }
    const room = this.#file ? 0 : Math.max(0, this.#settings.memoryLimit - this.#memoryBytes);
    if (room > 0) {
      const kept = chunk.subarray(0, room);
      this.#memory.push(kept);
      this.#memoryBytes += kept.length;
      chunk = chunk.subarray(kept.length);
    }
    if (chunk.length === 0) return;
    if (!this.#file) {
      await mkdir(this.#settings.directory, { recursive: true });
      const file = path.join(this.#settings.directory, `portico-body-${randomUUID()}`);
      this.#file = { path: file, handle: await open(file, 'w', 0o600) };
    }
    await this.#file.handle!.write(chunk);
    this.#fileBytes += chunk.length;
  }

  /** Ends writing; the body can now be read any number of times. */
  async seal(): Promise<void> {
    await this.#file?.handle?.close();
    if (this.#file) this.#file.handle = undefined;
  }

  /** A fresh stream of the whole body. */
  stream(): Readable {
    if (this.#disposed) throw new Error('the stored body was disposed of');
    const memory = this.#memory;
    const file = this.#file?.path;
    return Readable.from(
      (async function* () {
        yield* memory;
        if (file) yield* createReadStream(file);
      })(),
    );
  }

  /** Removes the spill file. */
  async dispose(): Promise<void> {
    this.#disposed = true;
    await this.#file?.handle?.close().catch(() => {});
    if (this.#file) await rm(this.#file.path, { force: true });
    this.#file = undefined;
  }
}
