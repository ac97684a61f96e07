import { mkdtempSync, readdirSync, rmSync } from 'node:fs';
import http from 'node:http';
import net, { type AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { Readable } from 'node:stream';
import { afterEach, describe, expect, it } from 'vitest';
import { ErrorCode, PorticoError } from '../errors.ts';
import { Entity } from '../http/entity.ts';
import { Response } from '../http/message.ts';
import { TemporaryStorage } from '../http/temporary-storage.ts';
import { createMemoryLogger } from '../logging.ts';
import type { Handler } from '../types.ts';
import { handleUpgrade } from './upgrade.ts';

const servers: http.Server[] = [];
const directories: string[] = [];
afterEach(async () => {
  for (const server of servers.splice(0)) {
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  }
  for (const directory of directories.splice(0)) rmSync(directory, { recursive: true, force: true });
});

/** A server whose upgrades go to handleUpgrade; `outcomes` gets how each one's promise settled. */
async function serveUpgrades(
  handler: Handler,
  outcomes: Promise<string>[],
  logger = createMemoryLogger(),
): Promise<number> {
  const server = http.createServer();
  servers.push(server);
  server.on('upgrade', (req, socket, head) => {
    outcomes.push(
      handleUpgrade(req, socket as net.Socket, head, { handler, logger }).then(
        () => 'resolved',
        (error: unknown) => `rejected: ${String(error)}`,
      ),
    );
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return (server.address() as AddressInfo).port;
}

/** Sends an upgrade request and reads what comes back until the server closes the connection. */
function upgradeRequest(
  port: number,
  request = 'GET /ws HTTP/1.1\r\nHost: x\r\nConnection: Upgrade\r\nUpgrade: websocket\r\n\r\n',
): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = net.connect(port, '127.0.0.1');
    let text = '';
    socket.on('data', (chunk) => (text += chunk.toString('latin1')));
    socket.on('end', () => resolve(text));
    socket.on('error', reject);
    socket.write(request);
  });
}

describe('an upgrade that no handler takes over is answered with the handler’s response', () => {
  // A body kept by the temporary storage (an EntityExtractFilter on responses keeps one) that is
  // larger than an entity may be read into memory: reading it for the answer used to reject, and
  // the server's upgrade listener does not wait on the promise, so the rejection ended the process.
  it('a stored body too large to read: 500, never a rejection, and its spill file removed', async () => {
    const directory = mkdtempSync(path.join(os.tmpdir(), 'portico-upgrade-'));
    directories.push(directory);
    const storage = new TemporaryStorage({ memoryLimit: 16, fileLimit: 1024 * 1024, directory });
    const handler: Handler = {
      async handle() {
        const entity = new Entity(Readable.from([Buffer.alloc(4096, 'x')]), undefined, { maxBytes: 1024 });
        await entity.buffer(storage);
        return new Response({ status: 200, entity });
      },
    };
    const outcomes: Promise<string>[] = [];
    const port = await serveUpgrades(handler, outcomes);
    const answer = await upgradeRequest(port);
    expect(answer).toMatch(/^HTTP\/1\.1 500 /);
    expect(await Promise.all(outcomes)).toEqual(['resolved']);
    expect(readdirSync(directory)).toEqual([]);
  });

  it('a stored body that can be read is sent, and its spill file removed', async () => {
    const directory = mkdtempSync(path.join(os.tmpdir(), 'portico-upgrade-'));
    directories.push(directory);
    const storage = new TemporaryStorage({ memoryLimit: 16, fileLimit: 1024 * 1024, directory });
    const handler: Handler = {
      async handle() {
        const entity = new Entity(Readable.from([Buffer.from('not upgraded, but here is a body')]));
        await entity.buffer(storage);
        return new Response({ status: 403, entity });
      },
    };
    const outcomes: Promise<string>[] = [];
    const port = await serveUpgrades(handler, outcomes);
    const answer = await upgradeRequest(port);
    expect(answer).toMatch(/^HTTP\/1\.1 403 /);
    expect(answer).toContain('\r\n\r\nnot upgraded, but here is a body');
    expect(await Promise.all(outcomes)).toEqual(['resolved']);
    expect(readdirSync(directory)).toEqual([]);
  });

  it('a failure nothing answered (a plugin response whose fields cannot be read): logged, the connection closed, never a rejection', async () => {
    const logger = createMemoryLogger();
    const handler: Handler = {
      async handle() {
        const response = new Response({ status: 200 });
        Object.defineProperty(response, 'headers', {
          get() {
            throw new Error('no fields here');
          },
        });
        return response;
      },
    };
    const outcomes: Promise<string>[] = [];
    const port = await serveUpgrades(handler, outcomes, logger);
    const answer = await upgradeRequest(port);
    expect(answer).toBe('');
    expect(await Promise.all(outcomes)).toEqual(['resolved']);
    expect(logger.records.map((record) => record.message)).toContain('an upgrade request failed');
  });
});

describe('upgrade requests that are not upgrades', () => {
  /** A handler that records what it was given and answers with a streamed body. */
  function recording() {
    const seen: { upgrade: boolean; fields: string[] }[] = [];
    const handler: Handler = {
      async handle(context, request) {
        seen.push({ upgrade: context.get('upgrade') !== undefined, fields: request.headers.names() });
        return new Response({
          status: 200,
          entity: new Entity(Readable.from([Buffer.from('plain answer')])),
        });
      },
    };
    return { seen, handler };
  }

  it.each([
    ['Content-Length: 5', 'Content-Length: 5\r\n\r\nhello'],
    ['Transfer-Encoding: chunked', 'Transfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n0\r\n\r\n'],
  ])('one with content (%s) is refused with 400 before any handler, and closed', async (_what, framing) => {
    const { seen, handler } = recording();
    const outcomes: Promise<string>[] = [];
    const port = await serveUpgrades(handler, outcomes);
    const answer = await upgradeRequest(
      port,
      `GET /ws HTTP/1.1\r\nHost: x\r\nConnection: Upgrade\r\nUpgrade: websocket\r\n${framing}GET /private HTTP/1.1\r\nHost: x\r\n\r\n`,
    );
    expect(answer).toMatch(/^HTTP\/1\.1 400 /);
    expect(answer.match(/HTTP\/1\.1/g)).toHaveLength(1);
    expect(seen).toEqual([]);
    expect(await Promise.all(outcomes)).toEqual(['resolved']);
  });

  it('one with Content-Length: 0 goes to the handler as an upgrade', async () => {
    const { seen, handler } = recording();
    const port = await serveUpgrades(handler, []);
    await upgradeRequest(
      port,
      'GET /ws HTTP/1.1\r\nHost: x\r\nConnection: Upgrade\r\nUpgrade: websocket\r\nContent-Length: 0\r\n\r\n',
    );
    expect(seen.map((s) => s.upgrade)).toEqual([true]);
  });

  it('an HTTP/1.0 one is a plain request: no upgrade context, no Upgrade field, its answer streamed, then closed', async () => {
    const { seen, handler } = recording();
    const outcomes: Promise<string>[] = [];
    const port = await serveUpgrades(handler, outcomes);
    const answer = await upgradeRequest(
      port,
      'GET /ws HTTP/1.0\r\nHost: x\r\nConnection: Upgrade\r\nUpgrade: websocket\r\n\r\n',
    );
    expect(answer).toMatch(/^HTTP\/1\.1 200 OK\r\n/);
    expect(answer).toMatch(/^Connection: close\r$/im);
    expect(answer).not.toMatch(/^upgrade:/im);
    expect(answer.endsWith('\r\n\r\nplain answer')).toBe(true);
    expect(seen).toEqual([{ upgrade: false, fields: ['Host'] }]);
    expect(await Promise.all(outcomes)).toEqual(['resolved']);
  });
});

describe('an upgrade request arrives as any other', () => {
  it.each([
    [
      'GET /ws HTTP/2.0\r\nHost: x\r\n',
      'HTTP/1.1 505 HTTP Version Not Supported',
      'HTTP Version Not Supported',
    ],
    [
      'GET /ws HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: gzip, chunked\r\n',
      'HTTP/1.1 501 Not Implemented',
      'Not Implemented',
    ],
    ['GET /ws HTTP/1.1\r\nHost: x/y\r\n', 'HTTP/1.1 400 Bad Request', 'Bad Request'],
  ])('%j is refused as a plain request is, before any handler', async (head, status, body) => {
    let asked = 0;
    const handler: Handler = {
      async handle() {
        asked++;
        return new Response({ status: 200 });
      },
    };
    const outcomes: Promise<string>[] = [];
    const port = await serveUpgrades(handler, outcomes);
    const answer = await upgradeRequest(port, `${head}Connection: Upgrade\r\nUpgrade: websocket\r\n\r\n`);
    expect(answer.split('\r\n')[0]).toBe(status);
    expect(answer).toMatch(/\r\nConnection: close\r\n/);
    expect(answer.slice(answer.indexOf('\r\n\r\n') + 4)).toBe(body);
    expect(asked).toBe(0);
    expect(await Promise.all(outcomes)).toEqual(['resolved']);
  });

  it('divert is asked with the normalised path, and the handler it gives serves the request, HTTP/1.0 too', async () => {
    const asked: string[] = [];
    const other: Handler = { handle: async () => new Response({ status: 404, entity: 'elsewhere' }) };
    const server = http.createServer();
    servers.push(server);
    server.on('upgrade', (req, socket, head) => {
      void handleUpgrade(req, socket as net.Socket, head, {
        handler: { handle: async () => new Response({ status: 200, entity: 'main' }) },
        logger: createMemoryLogger(),
        divert: (request) => {
          asked.push(request.uri.rawPath);
          return request.uri.rawPath.startsWith('/admin') ? other : undefined;
        },
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const port = (server.address() as AddressInfo).port;
    const upgrade = (line: string) =>
      upgradeRequest(port, `${line}\r\nHost: x\r\nConnection: Upgrade\r\nUpgrade: websocket\r\n\r\n`);
    /** The status and the body of the answer. */
    const answerOf = (text: string) => [text.split(' ')[1], text.slice(text.indexOf('\r\n\r\n') + 4)];
    expect(answerOf(await upgrade('GET /x/../admin/ws HTTP/1.1'))).toEqual(['404', 'elsewhere']);
    expect(answerOf(await upgrade('GET /ws HTTP/1.1'))).toEqual(['200', 'main']);
    expect(answerOf(await upgrade('GET //admin/ws HTTP/1.0'))).toEqual(['404', 'elsewhere']);
    expect(asked).toEqual(['/admin/ws', '/ws', '/admin/ws']);
  });
});

describe('a handler that fails an upgrade is answered as a plain request’s failure is', () => {
  it.each([
    [
      'an error of its own: 500',
      new Error('boom'),
      'HTTP/1.1 500 Internal Server Error',
      'Internal Server Error',
    ],
    [
      'a body past its bound: 413',
      new PorticoError(ErrorCode.ENTITY_TOO_LARGE, 'too large'),
      'HTTP/1.1 413 Payload Too Large',
      'Payload Too Large',
    ],
  ])('%s (it was 502 for every failure)', async (_, error, status, body) => {
    const handler: Handler = {
      async handle() {
        throw error;
      },
    };
    const outcomes: Promise<string>[] = [];
    const logger = createMemoryLogger();
    const port = await serveUpgrades(handler, outcomes, logger);
    const answer = await upgradeRequest(port);
    expect(answer.split('\r\n')[0]).toBe(status);
    expect(answer.slice(answer.indexOf('\r\n\r\n') + 4)).toBe(body);
    expect(await Promise.all(outcomes)).toEqual(['resolved']);
    if (status.includes('500'))
      expect(logger.records).toContainEqual(
        expect.objectContaining({ level: 'error', message: 'request failed' }),
      );
  });
});
