import { existsSync, mkdtempSync, readdirSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Readable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { Entity } from './entity.ts';
import { TemporaryStorage } from './temporary-storage.ts';

function chunks(total: number, size = 64 * 1024): Readable {
  return Readable.from(
    (function* () {
      for (let sent = 0; sent < total; sent += size)
        yield Buffer.alloc(Math.min(size, total - sent), sent / size);
    })(),
  );
}

async function drain(stream: Readable): Promise<{ length: number; sample: number[] }> {
  let length = 0;
  const sample: number[] = [];
  for await (const chunk of stream) {
    const buffer = chunk as Buffer;
    if (sample.length < 40) sample.push(buffer[0]!);
    length += buffer.length;
  }
  return { length, sample };
}

describe('TemporaryStorage', () => {
  const directory = () => mkdtempSync(path.join(os.tmpdir(), 'portico-storage-'));

  it('keeps a small body in memory', async () => {
    const dir = directory();
    const body = await new TemporaryStorage({ memoryLimit: 1024, fileLimit: 10_000, directory: dir }).store(
      Readable.from([Buffer.from('hello')]),
    );
    expect(body.file).toBeUndefined();
    expect(readdirSync(dir)).toEqual([]);
    expect(Buffer.concat(await Readable.from(body.stream()).toArray()).toString()).toBe('hello');
  });

  it('spills the rest of a large body to a file, replays it whole any number of times, and removes the file', async () => {
    const dir = directory();
    const storage = new TemporaryStorage({
      memoryLimit: 64 * 1024,
      fileLimit: 64 * 1024 * 1024,
      directory: dir,
    });
    const body = await storage.store(chunks(8 * 1024 * 1024));
    expect(body.length).toBe(8 * 1024 * 1024);
    expect(body.file && existsSync(body.file)).toBe(true);
    const first = await drain(body.stream());
    const second = await drain(body.stream());
    expect(first).toEqual(second);
    expect(first.length).toBe(8 * 1024 * 1024);
    expect(first.sample.slice(0, 3)).toEqual([0, 1, 2]);
    await body.dispose();
    expect(readdirSync(dir)).toEqual([]);
  });

  it('refuses a body past the file limit with a coded error and leaves no file behind', async () => {
    const dir = directory();
    const storage = new TemporaryStorage({ memoryLimit: 1024, fileLimit: 100_000, directory: dir });
    await expect(storage.store(chunks(1024 * 1024))).rejects.toMatchObject({
      code: 'PORTICO_E_ENTITY_TOO_LARGE',
    });
    expect(readdirSync(dir)).toEqual([]);
  });
});

describe('Entity.buffer', () => {
  it('makes a streamed body replayable through the storage without holding it in memory', async () => {
    const dir = mkdtempSync(path.join(os.tmpdir(), 'portico-entity-'));
    const entity = new Entity(chunks(2 * 1024 * 1024), 2 * 1024 * 1024);
    await entity.buffer(
      new TemporaryStorage({ memoryLimit: 4096, fileLimit: 10 * 1024 * 1024, directory: dir }),
    );
    expect(entity.isStored).toBe(true);
    expect(entity.isBuffered).toBe(true);
    expect((await drain(entity.stream()!)).length).toBe(2 * 1024 * 1024);
    expect((await drain(entity.stream()!)).length).toBe(2 * 1024 * 1024);
    expect((await entity.bytes()).length).toBe(2 * 1024 * 1024);
    await entity.dispose();
    expect(readdirSync(dir)).toEqual([]);
  });

  it('applies its own bound when reading a stored body into memory', async () => {
    const dir = mkdtempSync(path.join(os.tmpdir(), 'portico-entity-'));
    const entity = new Entity(chunks(200_000), undefined, { maxBytes: 100_000 });
    await entity.buffer(new TemporaryStorage({ memoryLimit: 1024, fileLimit: 1_000_000, directory: dir }));
    await expect(entity.bytes()).rejects.toMatchObject({ code: 'PORTICO_E_ENTITY_TOO_LARGE' });
    await entity.dispose();
  });
});
