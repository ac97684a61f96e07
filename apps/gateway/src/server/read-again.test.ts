import { once } from 'node:events';
import http from 'node:http';
import net, { type AddressInfo, type Socket } from 'node:net';
import { createMemoryLogger } from '@portico/gateway-core/runtime';
import { afterEach, describe, expect, it } from 'vitest';
import { readAgain } from './read-again.ts';

const cleanups: (() => void)[] = [];
afterEach(() => {
  for (const cleanup of cleanups.splice(0)) cleanup();
});

/**
 * What a tunnel hears of its client when Node hands the Upgrade over with the connection paused: the
 * request before it pauses its socket (as a request held back does) and is never answered; the
 * Upgrade comes in the same write with `EARLY`, and `LATER` is sent once it has been handed over.
 * `restart` runs as the server's upgrade listener begins.
 */
async function tunnelHears(restart: (socket: Socket) => void): Promise<string> {
  const server = http.createServer((req) => req.socket.pause());
  let heard = '';
  const handedOver = new Promise<Socket>((resolve) => {
    server.on('upgrade', (_req, socket: Socket, head: Buffer) => {
      restart(socket);
      heard += head.toString('latin1');
      socket.on('data', (chunk: Buffer) => {
        heard += chunk.toString('latin1');
      });
      socket.write('HTTP/1.1 101 Switching Protocols\r\nConnection: Upgrade\r\nUpgrade: x\r\n\r\n');
      resolve(socket);
    });
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const client = net.connect((server.address() as AddressInfo).port, '127.0.0.1');
  cleanups.push(() => {
    client.destroy();
    server.closeAllConnections();
    server.close();
  });
  client.on('data', () => {});
  client.write(
    'GET /a HTTP/1.1\r\nHost: x\r\n\r\n' +
      'GET /ws HTTP/1.1\r\nHost: x\r\nConnection: Upgrade\r\nUpgrade: x\r\n\r\nEARLY',
  );
  await handedOver;
  client.write('LATER');
  const started = Date.now();
  while (!heard.includes('LATER') && Date.now() - started < 500) await new Promise((r) => setTimeout(r, 20));
  return heard;
}

describe('readAgain: an upgraded connection that Node left paused is read again', () => {
  it('without it, the tunnel hears only what came with the request (the case it exists for)', async () => {
    expect(await tunnelHears(() => {})).toBe('EARLY');
  });

  it("with Node's handle internals", async () => {
    const logger = createMemoryLogger();
    expect(await tunnelHears((socket) => readAgain(socket, logger))).toBe('EARLYLATER');
    expect(logger.records).toEqual([]);
  });

  it('on a Node whose handle lacks them: through the stream, and said once at debug', async () => {
    const logger = createMemoryLogger();
    // A handle without `reading` and `readStart`, as a Node without these internals would have.
    const heard = await tunnelHears((socket) => {
      readAgain(socket, logger, {});
      readAgain(socket, logger, {});
    });
    expect(heard).toBe('EARLYLATER');
    expect(logger.records.map(({ level, message }) => ({ level, message }))).toEqual([
      {
        level: 'debug',
        message:
          "sockets here lack Node's handle internals: an upgraded connection is read again through its stream",
      },
    ]);
  });
});
