import { Transform } from 'node:stream';
import { finished } from 'node:stream/promises';
import { EL_GET } from '@portico/gateway-core/expressions';
import type { Entity } from '@portico/gateway-core/http-helpers';

/** What capture saw of a body: its first bytes, how long it was, and whether it was read to its end. */
export interface BodySample {
  bytes: Buffer;
  /** The whole length when known (a buffered body, or a stream read to its end). */
  length: number | undefined;
  complete: boolean;
}

const EMPTY: BodySample = { bytes: Buffer.alloc(0), length: 0, complete: true };

/**
 * Samples at most `max` bytes of a body without taking it from whoever reads it next, and calls
 * `done` with them. A body in memory is sampled at once; one kept by the temporary storage is read
 * from a fresh stream of its own. A streamed body is teed: the entity gets a pass-through stream
 * that copies the first bytes aside as they flow to the reader, and `done` runs when the body ends
 * (or fails). Returns that pass-through stream, so that the caller can drain it if nobody reads it.
 */
export function sampleBody(
  entity: Entity,
  max: number,
  done: (sample: BodySample) => void,
): Transform | undefined {
  if (entity.isEmpty) {
    done(EMPTY);
    return undefined;
  }
  const inMemory = entity[EL_GET]('bytes') as Buffer | undefined;
  if (inMemory !== undefined) {
    done({ bytes: inMemory.subarray(0, max), length: inMemory.length, complete: true });
    return undefined;
  }
  if (entity.isStored) {
    void readPrefix(entity, max).then(done);
    return undefined;
  }
  return tee(entity, max, done);
}

async function readPrefix(entity: Entity, max: number): Promise<BodySample> {
  const stream = entity.stream();
  const length = entity.length;
  const chunks: Buffer[] = [];
  let kept = 0;
  try {
    for await (const chunk of stream ?? []) {
      const buffer = Buffer.isBuffer(chunk) ? chunk : Buffer.from(chunk as string);
      chunks.push(buffer.subarray(0, max - kept));
      kept += Math.min(buffer.length, max - kept);
      if (kept >= max) break;
    }
    return { bytes: Buffer.concat(chunks), length, complete: true };
  } catch {
    return { bytes: Buffer.concat(chunks), length, complete: false };
  } finally {
    stream?.destroy();
  }
}

function tee(entity: Entity, max: number, done: (sample: BodySample) => void): Transform {
  const source = entity.stream()!;
  const chunks: Buffer[] = [];
  let kept = 0;
  let total = 0;
  const pass = new Transform({
    transform(chunk: Buffer | string, _encoding, callback) {
      const buffer = typeof chunk === 'string' ? Buffer.from(chunk) : chunk;
      total += buffer.length;
      if (kept < max) {
        // A copy: the reader owns the chunk and may reuse it.
        const part = Buffer.from(buffer.subarray(0, max - kept));
        chunks.push(part);
        kept += part.length;
      }
      callback(null, buffer);
    },
  });
  let reported = false;
  const report = (complete: boolean) => {
    if (reported) return;
    reported = true;
    done({ bytes: Buffer.concat(chunks), length: complete ? total : undefined, complete });
  };
  let ended = false;
  pass.once('end', () => {
    ended = true;
    report(true);
  });
  // A reader that gives up (a client gone) ends the sample where it stopped, and gives up the source
  // as it would have without capture (an upstream body is released, not left half read).
  pass.once('close', () => {
    report(false);
    if (!ended && !source.destroyed) source.destroy();
  });
  // `pipe` leaves the source open when the reader gives up (it may be the client's connection,
  // which must stay usable for the answer); a source that fails fails the reader too.
  finished(source).then(
    () => undefined,
    (error: unknown) => {
      report(false);
      pass.destroy(error instanceof Error ? error : new Error(String(error)));
    },
  );
  source.pipe(pass);
  entity.setContent(pass);
  return pass;
}

/** Lets a teed request body flow when nobody read it, so its connection can carry the next request. */
export function drainUnread(stream: Transform | undefined): void {
  if (stream !== undefined && stream.readableFlowing === null) stream.resume();
}
