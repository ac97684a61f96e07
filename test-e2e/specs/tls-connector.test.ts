import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import https from 'node:https';
import net from 'node:net';
import path from 'node:path';
import tls from 'node:tls';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { instanceDirectory, type RunningGateway, startGateway } from '../support/gateway.ts';

/** An HTTPS connector from admin.json, with and without client certificates, on the real process. */
function openssl(dir: string, ...args: string[]) {
  execFileSync('openssl', args, { cwd: dir, stdio: 'ignore' });
}

function get(
  url: string,
  options: https.RequestOptions,
): Promise<{ status: number; body: string; setCookie: string[] }> {
  return new Promise((resolve, reject) => {
    https
      .get(url, options, (res) => {
        let body = '';
        res.on('data', (c) => (body += c));
        res.on('end', () =>
          resolve({ status: res.statusCode ?? 0, body, setCookie: res.headers['set-cookie'] ?? [] }),
        );
      })
      .on('error', reject);
  });
}

/**
 * Opens a TCP connection to the port, sends `bytes` (if any) and never anything more: resolves with
 * how long the gateway kept it open, or `undefined` when it was still open after `giveUpMs`.
 */
function heldOpen(port: number, bytes: Buffer | undefined, giveUpMs: number): Promise<number | undefined> {
  return new Promise((resolve) => {
    const started = Date.now();
    const socket = net.connect(port, '127.0.0.1', () => {
      if (bytes) socket.write(bytes);
    });
    socket.on('data', () => {});
    socket.on('error', () => {});
    const timer = setTimeout(() => {
      socket.destroy();
      resolve(undefined);
    }, giveUpMs);
    socket.on('close', () => {
      clearTimeout(timer);
      resolve(Date.now() - started);
    });
  });
}

const HEADERS_TIMEOUT_MS = 1000;

describe('TLS connectors', () => {
  let gateway: RunningGateway;
  let base: string;
  let port: number;
  const pem = (name: string) => readFileSync(path.join(base, 'config', name));

  beforeAll(async () => {
    base = instanceDirectory({
      // Tried before hello (route order follows names): writes the server-side session.
      'config/routes/0-session.json': {
        condition: "${request.uri.path == '/session'}",
        handler: {
          type: 'Chain',
          config: {
            filters: [
              {
                type: 'AssignmentFilter',
                config: { onRequest: [{ target: '${session.user}', value: 'alice' }] },
              },
            ],
            handler: { type: 'StaticResponseHandler', config: { status: 200, entity: 'stored' } },
          },
        },
      },
      'config/routes/hello.json': {
        handler: {
          type: 'StaticResponseHandler',
          config: {
            status: 200,
            entity: 'secure=${contexts.client.isSecure} certs=${length(contexts.client.certificates)}',
          },
        },
      },
    });
    const dir = path.join(base, 'config');
    openssl(
      dir,
      'req',
      '-x509',
      '-newkey',
      'rsa:2048',
      '-nodes',
      '-days',
      '2',
      '-subj',
      '/CN=Test CA',
      '-keyout',
      'ca.key',
      '-out',
      'ca.pem',
    );
    openssl(
      dir,
      'req',
      '-newkey',
      'rsa:2048',
      '-nodes',
      '-subj',
      '/CN=localhost',
      '-keyout',
      'server.key',
      '-out',
      'server.csr',
    );
    openssl(
      dir,
      'x509',
      '-req',
      '-in',
      'server.csr',
      '-CA',
      'ca.pem',
      '-CAkey',
      'ca.key',
      '-CAcreateserial',
      '-days',
      '2',
      '-out',
      'server.pem',
    );
    openssl(
      dir,
      'req',
      '-newkey',
      'rsa:2048',
      '-nodes',
      '-subj',
      '/CN=client',
      '-keyout',
      'client.key',
      '-out',
      'client.csr',
    );
    openssl(
      dir,
      'x509',
      '-req',
      '-in',
      'client.csr',
      '-CA',
      'ca.pem',
      '-CAkey',
      'ca.key',
      '-CAcreateserial',
      '-days',
      '2',
      '-out',
      'client.pem',
    );
    const { writeInstanceFile } = await import('../support/gateway.ts');
    // Port 0 twice would need two announcements; pick a free port from the OS first.
    const net = await import('node:net');
    port = await new Promise<number>((resolve) => {
      const probe = net.createServer().listen(0, '127.0.0.1', () => {
        const chosen = (probe.address() as { port: number }).port;
        probe.close(() => resolve(chosen));
      });
    });
    writeInstanceFile(base, 'config/admin.json', {
      connectors: [
        {
          port,
          host: '127.0.0.1',
          tls: { key: 'server.key', cert: 'server.pem', ca: 'ca.pem', clientAuth: 'REQUEST' },
        },
      ],
      limits: { headersTimeout: `${HEADERS_TIMEOUT_MS} ms` },
    });
    gateway = await startGateway({ base, adminConnectors: true });
  });

  afterAll(async () => {
    await gateway?.stop();
  });

  it('serves HTTPS with the configured certificate, and tells handlers the connection is secure', async () => {
    const { status, body } = await get(`https://localhost:${port}/`, { ca: pem('ca.pem') });
    expect({ status, body }).toEqual({ status: 200, body: 'secure=true certs=0' });
  });

  it('passes a client certificate to the handlers when one is presented', async () => {
    const { status, body } = await get(`https://localhost:${port}/`, {
      ca: pem('ca.pem'),
      cert: pem('client.pem'),
      key: pem('client.key'),
    });
    expect({ status, body }).toEqual({ status: 200, body: 'secure=true certs=1' });
  });

  it('is refused by a client that does not trust the certificate', async () => {
    await expect(get(`https://localhost:${port}/`, {})).rejects.toThrow(/certificate/i);
  });

  it('marks the server-side session cookie Secure on a request that came over HTTPS, as a servlet container does', async () => {
    const response = await get(`https://localhost:${port}/session`, { ca: pem('ca.pem') });
    expect(response.body).toBe('stored');
    const cookie = response.setCookie.find((c) => c.startsWith('IG_SESSIONID='));
    expect(cookie).toMatch(/; HttpOnly(;|$)/);
    expect(cookie).toMatch(/; Secure(;|$)/);
  });

  describe('a client that never finishes its handshake is cut off after headersTimeout', () => {
    // It was held for ever: Node's handshakeTimeout (120 seconds) handed the connection to the
    // gateway's HTTP error answer, which cannot be written before a handshake, and nothing closed it.
    it('one that sends nothing', async () => {
      const heldMs = await heldOpen(port, undefined, HEADERS_TIMEOUT_MS + 5000);
      expect(heldMs).toBeDefined();
      expect(heldMs).toBeGreaterThanOrEqual(HEADERS_TIMEOUT_MS - 100);
    });

    it('one that sends the start of a ClientHello and stops', async () => {
      // A handshake record header announcing 512 bytes, and one of them.
      const partial = Buffer.from([0x16, 0x03, 0x01, 0x02, 0x00, 0x01]);
      const heldMs = await heldOpen(port, partial, HEADERS_TIMEOUT_MS + 5000);
      expect(heldMs).toBeDefined();
    });

    it('one that completes it is then held to headersTimeout as before: 408', async () => {
      const started = Date.now();
      const answer = await new Promise<string>((resolve, reject) => {
        const socket = tls.connect({ port, host: '127.0.0.1', ca: pem('ca.pem'), servername: 'localhost' });
        let text = '';
        socket.on('data', (chunk) => (text += chunk));
        socket.on('close', () => resolve(text));
        socket.on('error', reject);
      });
      expect(answer).toMatch(/^HTTP\/1\.1 408 /);
      expect(Date.now() - started).toBeLessThan(HEADERS_TIMEOUT_MS + 5000);
    });
  });
});
