import { createHash, randomBytes } from 'node:crypto';
import http from 'node:http';
import net from 'node:net';
import { Readable } from 'node:stream';
import { setTimeout as sleep } from 'node:timers/promises';

/** A complete HTTP answer as the client saw it. */
export interface Reply {
  status: number;
  headers: http.IncomingHttpHeaders;
  body: Buffer;
  text: string;
}

export interface SendOptions {
  method?: string;
  headers?: http.OutgoingHttpHeaders;
  body?: string | Buffer | Readable;
  /** A keep-alive agent to reuse connections; by default every request has its own connection. */
  agent?: http.Agent | false;
  /** Gives up (rejects) after this long; default 15 seconds. */
  timeoutMs?: number;
}

/**
 * One request with node:http, resolving when the whole body has arrived. Rejects on any transport
 * failure (refused, reset, a body cut short), with the error's `code` when Node gives one, and
 * `reusedSocket` (sent on a kept-alive connection) and `answered` (a response had begun).
 */
export function send(url: string, options: SendOptions = {}): Promise<Reply> {
  return new Promise((resolve, reject) => {
    const req = http.request(url, {
      method: options.method ?? 'GET',
      headers: options.headers ?? {},
      agent: options.agent ?? false,
    });
    const timer = setTimeout(
      () => req.destroy(new Error(`no complete answer within ${options.timeoutMs ?? 15_000} ms`)),
      options.timeoutMs ?? 15_000,
    );
    req.once('error', (error) => {
      clearTimeout(timer);
      // Node's advice: a reset of a reused keep-alive connection before any answer may be retried.
      reject(Object.assign(error, { reusedSocket: req.reusedSocket, answered: false }));
    });
    req.once('response', (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (chunk: Buffer) => chunks.push(chunk));
      res.once('error', (error) => {
        clearTimeout(timer);
        reject(Object.assign(error, { reusedSocket: req.reusedSocket, answered: true }));
      });
      res.once('end', () => {
        clearTimeout(timer);
        if (!res.complete) {
          const error = new Error('the response body was cut short');
          reject(
            Object.assign(error, { code: 'E_INCOMPLETE', reusedSocket: req.reusedSocket, answered: true }),
          );
          return;
        }
        const body = Buffer.concat(chunks);
        resolve({ status: res.statusCode!, headers: res.headers, body, text: body.toString('utf8') });
      });
    });
    const { body } = options;
    if (body instanceof Readable) body.pipe(req);
    else req.end(body);
  });
}

/**
 * A keep-alive agent that lets go of an idle connection before the server closes it. Node's agent
 * honours a server's `Keep-Alive: timeout=N` (dropping an idle connection a second before N) only
 * when it has a `timeout` of its own; without one it keeps the connection until the server closes
 * it (Portico: 6 s after the last response, the 5 announced plus Node's second of grace), and a
 * request sent in the millisecond the server closes it is reset (`ECONNRESET` on a reused socket,
 * not the gateway's failure). The timeout itself is far above any test's wait.
 */
export function keepAliveAgent(maxSockets: number): http.Agent {
  return new http.Agent({ keepAlive: true, maxSockets, timeout: 120_000 });
}

/** GET (or another method) and parse the body as JSON. */
export async function json<T = any>(
  url: string,
  options: SendOptions = {},
): Promise<{ status: number; body: T }> {
  const reply = await send(url, options);
  return { status: reply.status, body: JSON.parse(reply.text) as T };
}

export interface RawReply {
  /** Everything the server wrote before closing (or before the client gave up). */
  text: string;
  /** The status code of the first response, if one came. */
  status: number | undefined;
  /** Milliseconds from connecting to the server closing the connection (or giving up). */
  elapsedMs: number;
  /** True when the server closed the connection; false when the client gave up waiting. */
  closedByServer: boolean;
}

/**
 * Writes bytes exactly as given to a fresh connection (for malformed or ambiguous requests a real
 * client would refuse to send) and collects what comes back until the server closes. `chunks` with
 * `gapMs` trickle the request in pieces, like a slow client.
 */
export function raw(
  url: string,
  request: string | string[],
  options: { waitMs?: number; gapMs?: number } = {},
): Promise<RawReply> {
  const { port, hostname } = new URL(url);
  const pieces = Array.isArray(request) ? request : [request];
  return new Promise((resolve) => {
    const started = Date.now();
    let text = '';
    let givenUp = false;
    const socket = net.connect(Number(port), hostname);
    socket.setEncoding('latin1');
    socket.on('data', (chunk: string) => (text += chunk));
    socket.on('error', () => {});
    socket.on('close', () => {
      clearTimeout(timer);
      const status = /^HTTP\/1\.[01] (\d{3})/.exec(text)?.[1];
      resolve({
        text,
        status: status === undefined ? undefined : Number(status),
        elapsedMs: Date.now() - started,
        closedByServer: !givenUp,
      });
    });
    const timer = setTimeout(() => {
      givenUp = true;
      socket.destroy();
    }, options.waitMs ?? 10_000);
    socket.once('connect', async () => {
      for (const [i, piece] of pieces.entries()) {
        if (i > 0) await sleep(options.gapMs ?? 0);
        if (socket.destroyed) return;
        socket.write(piece, 'latin1');
      }
    });
  });
}

// Shared with the packages' tests.
export { waitFor } from '@portico/test-support';

/**
 * True for the failure RFC 9112 §9.3.1 lets a client retry: a kept-alive connection the server
 * closed (as idle) while the request was on its way, before any answer began.
 */
export function isRetryableReset(error: unknown): boolean {
  const e = error as { reusedSocket?: boolean; answered?: boolean };
  return (
    e?.reusedSocket === true && e.answered === false && ['ECONNRESET', 'EPIPE'].includes(errorCode(error))
  );
}

/** The error code of a failed request (`ECONNREFUSED`, `ECONNRESET` ...), or its message. */
export function errorCode(error: unknown): string {
  const code = (error as { code?: unknown })?.code;
  return typeof code === 'string' ? code : String((error as Error)?.message ?? error);
}

/**
 * A stream of `total` bytes made by repeating one random block, so that 100 MB costs 64 KB of
 * memory; `digest` is the SHA-256 the receiver must compute.
 */
export function generated(
  total: number,
  blockSize = 64 * 1024,
): { stream(): Readable; digest: string; size: number } {
  const block = randomBytes(blockSize);
  const hash = createHash('sha256');
  for (let sent = 0; sent < total; sent += blockSize)
    hash.update(block.subarray(0, Math.min(blockSize, total - sent)));
  const digest = hash.digest('hex');
  return {
    digest,
    size: total,
    stream: () => {
      let sent = 0;
      return new Readable({
        read() {
          if (sent >= total) {
            this.push(null);
            return;
          }
          const size = Math.min(blockSize, total - sent);
          sent += size;
          this.push(size === blockSize ? block : block.subarray(0, size));
        },
      });
    },
  };
}

/** Counts and hashes a stream of bytes without keeping them. */
export function measure(stream: NodeJS.ReadableStream): Promise<{ bytes: number; digest: string }> {
  return new Promise((resolve, reject) => {
    const hash = createHash('sha256');
    let bytes = 0;
    stream.on('data', (chunk: Buffer) => {
      bytes += chunk.length;
      hash.update(chunk);
    });
    stream.once('error', reject);
    stream.once('end', () => resolve({ bytes, digest: hash.digest('hex') }));
  });
}

/** True when a TCP connection to the URL's port is refused. */
export function connectionRefused(url: string): Promise<boolean> {
  const { port, hostname } = new URL(url);
  return new Promise((resolve) => {
    const socket = net.connect(Number(port), hostname);
    socket.once('connect', () => {
      socket.destroy();
      resolve(false);
    });
    socket.once('error', (error: NodeJS.ErrnoException) => resolve(error.code === 'ECONNREFUSED'));
  });
}

/** Samples a number (a process's memory) every `intervalMs` until stopped; reports the largest. */
export function sampler(read: () => number, intervalMs = 20): { stop(): { max: number; samples: number } } {
  let max = read();
  let samples = 1;
  const timer = setInterval(() => {
    max = Math.max(max, read());
    samples++;
  }, intervalMs);
  return {
    stop() {
      clearInterval(timer);
      max = Math.max(max, read());
      return { max, samples: samples + 1 };
    },
  };
}
