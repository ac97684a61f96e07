import type { IncomingHttpHeaders, ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll } from 'vitest';
import { startHttpServer } from './http-server.ts';

/** One request as a test upstream received it. */
export interface ReceivedRequest {
  method: string;
  /** The request target: path and query, as sent. */
  target: string;
  headers: IncomingHttpHeaders;
  body: string;
}

/** How a test upstream answers: writes `response` (after the request's body was read whole). */
export type UpstreamAnswer = (request: ReceivedRequest, response: ServerResponse) => void;

/** A real HTTP server on the loopback interface, keeping every request it receives. */
export interface Upstream {
  /** `http://127.0.0.1:<port>`, without a trailing slash. */
  readonly url: string;
  readonly port: number;
  readonly received: ReceivedRequest[];
  /** Changes how later requests are answered. */
  answer(answer: UpstreamAnswer): void;
  close(): Promise<void>;
}

const OK: UpstreamAnswer = (_request, response) => {
  response.writeHead(200, { 'Content-Type': 'text/plain' });
  response.end('upstream');
};

/**
 * Starts an upstream server for a plugin's tests: requests go to it through the gateway's real
 * client handler, and the test reads what arrived in `received`. It answers 200 `upstream` unless
 * told otherwise.
 */
export async function startUpstream(answer: UpstreamAnswer = OK): Promise<Upstream> {
  let current = answer;
  const received: ReceivedRequest[] = [];
  const { url, server, close } = await startHttpServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const request = {
        method: req.method ?? 'GET',
        target: req.url ?? '/',
        headers: req.headers,
        body: Buffer.concat(chunks).toString('utf8'),
      };
      received.push(request);
      current(request, res);
    });
  });
  return {
    url,
    port: (server.address() as AddressInfo).port,
    received,
    answer: (next) => {
      current = next;
    },
    close,
  };
}

/**
 * An upstream for a whole test file: started before its tests and closed after them (vitest's
 * `beforeAll` and `afterAll`, registered here). Read its `url`, `received` ... inside tests.
 */
export function upstreamForSuite(answer?: UpstreamAnswer): Upstream {
  let started: Upstream | undefined;
  const current = (): Upstream => {
    if (started === undefined) throw new Error('the upstream is read before the suite started it');
    return started;
  };
  beforeAll(async () => {
    started = await startUpstream(answer);
  });
  afterAll(async () => {
    await started?.close();
  });
  return {
    get url() {
      return current().url;
    },
    get port() {
      return current().port;
    },
    get received() {
      return current().received;
    },
    answer: (next) => current().answer(next),
    close: () => current().close(),
  };
}
