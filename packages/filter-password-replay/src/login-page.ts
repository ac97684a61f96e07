import { Readable } from 'node:stream';
import { brotliDecompressSync, gunzipSync, inflateSync } from 'node:zlib';
import type { Response } from '@portico/gateway-core';
import { charsetDecoder } from '@portico/gateway-core/http-helpers';

/**
 * The most of a response body read to look for the login page marker and the extractions (or the
 * server's buffered-body limit, when smaller). Login pages are small; a larger body is not read as
 * one and goes on untouched, so that a download through a replaying route is never held in memory.
 */
export const MAX_LOGIN_PAGE_BYTES = 1024 * 1024;

/** One value taken from a login page: the first capturing group of its pattern's first match. */
export interface Extraction {
  readonly name: string;
  readonly pattern: RegExp;
}

/**
 * The text of a response body of at most `MAX_LOGIN_PAGE_BYTES` (decoded from gzip, deflate or br,
 * and from its charset), or undefined when it is larger or cannot be decoded. The response keeps its
 * body either way: a body read whole is put back as bytes, one cut short as the part read followed by
 * the rest of its stream.
 */
export async function pageText(response: Response): Promise<string | undefined> {
  const entity = response.entity;
  if (entity.isEmpty) return '';
  const limit = Math.min(MAX_LOGIN_PAGE_BYTES, entity.maxBytes);
  if (entity.length !== undefined && entity.length > limit) return undefined;
  const stream = entity.stream();
  if (stream === null) return '';
  const chunks: Buffer[] = [];
  let size = 0;
  const iterator = stream[Symbol.asyncIterator]();
  for (;;) {
    const next = await iterator.next();
    if (next.done) break;
    const chunk = Buffer.isBuffer(next.value) ? next.value : Buffer.from(next.value);
    chunks.push(chunk);
    size += chunk.length;
    if (size > limit) {
      entity.setContent(Readable.from(resumed(chunks, iterator)));
      return undefined;
    }
  }
  const bytes = Buffer.concat(chunks);
  entity.setContent(bytes);
  const decoded = decompressed(bytes, response.headers.get('content-encoding'), limit);
  if (decoded === undefined) return undefined;
  const declared = /;\s*charset\s*=\s*"?([^";\s]+)/i.exec(response.headers.get('content-type') ?? '')?.[1];
  return ((declared && charsetDecoder(declared)) || charsetDecoder('UTF-8')!)(decoded);
}

/** The chunks already read, then the rest of the stream. */
async function* resumed(read: Buffer[], rest: AsyncIterator<unknown>): AsyncGenerator<Buffer> {
  yield* read;
  for (;;) {
    const next = await rest.next();
    if (next.done) return;
    yield next.value as Buffer;
  }
}

/** The body with its one content coding undone (at most `limit` bytes), else undefined. */
function decompressed(bytes: Buffer, coding: string | undefined, limit: number): Buffer | undefined {
  const name = (coding ?? '').trim().toLowerCase();
  const options = { maxOutputLength: limit };
  try {
    if (name === '' || name === 'identity') return bytes;
    if (name === 'gzip' || name === 'x-gzip') return gunzipSync(bytes, options);
    if (name === 'deflate') return inflateSync(bytes, options);
    if (name === 'br') return brotliDecompressSync(bytes, options);
  } catch {
    // Corrupt, or larger than the limit once decoded: not a page this filter reads.
  }
  return undefined;
}

/**
 * Whether the marker matches, and each extraction's value (null when nothing matched). As the
 * incumbent reads a page, a pattern is matched line by line and the first matching line counts.
 */
export function scanPage(
  text: string,
  marker: RegExp | undefined,
  extractions: readonly Extraction[],
): { isLoginPage: boolean; values: Record<string, string | null> } {
  const lines = text.split(/\r\n|\r|\n/);
  const values: Record<string, string | null> = {};
  for (const { name, pattern } of extractions) {
    values[name] = null;
    for (const line of lines) {
      const match = pattern.exec(line);
      if (match) {
        values[name] = match[1] ?? null;
        break;
      }
    }
  }
  const isLoginPage = marker !== undefined && lines.some((line) => marker.test(line));
  return { isLoginPage, values };
}
