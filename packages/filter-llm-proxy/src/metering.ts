import { Transform } from 'node:stream';
import { finished } from 'node:stream/promises';
import type { Response } from '@portico/gateway-core';
import type { UsageReader } from './usage.ts';

/**
 * Reads a response body as it passes to the client, without holding any of it back: the entity
 * gets a pass-through stream that hands each chunk to `reader` and on at once. `done` runs once,
 * when the body has ended (`complete`), or when the client or the provider gave up (not complete),
 * with what the reader found. An empty body is done at once.
 */
export function meterBody(
  response: Response,
  reader: UsageReader,
  done: (tokens: number | undefined, complete: boolean) => void,
): void {
  const entity = response.entity;
  if (entity.isEmpty) {
    done(undefined, true);
    return;
  }
  const source = entity.stream();
  if (source === null) {
    done(undefined, true);
    return;
  }
  let readable = true;
  let reported = false;
  const report = (complete: boolean) => {
    if (reported) return;
    reported = true;
    let tokens: number | undefined;
    try {
      tokens = readable ? reader.end() : undefined;
    } catch {
      tokens = undefined;
    }
    done(tokens, complete);
  };
  const pass = new Transform({
    transform(chunk: Buffer | string, _encoding, callback) {
      const buffer = typeof chunk === 'string' ? Buffer.from(chunk) : chunk;
      if (readable) {
        try {
          reader.push(buffer);
        } catch {
          // What the reader could not follow is not a reason to fail the client's answer.
          readable = false;
        }
      }
      callback(null, buffer);
    },
    flush(callback) {
      report(true);
      callback();
    },
  });
  // A client that goes away ends the reading where it stopped, and lets the provider's body go.
  let ended = false;
  pass.once('end', () => {
    ended = true;
  });
  pass.once('close', () => {
    report(false);
    if (!ended && !source.destroyed) source.destroy();
  });
  finished(source).then(
    () => undefined,
    (error: unknown) => {
      report(false);
      pass.destroy(error instanceof Error ? error : new Error(String(error)));
    },
  );
  source.pipe(pass);
  entity.setContent(pass);
}
