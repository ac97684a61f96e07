import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import https from 'node:https';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { instanceDirectory, type RunningGateway, startGateway } from '../support/gateway.ts';

/** An HTTPS connector from admin.json, with and without client certificates, on the real process. */
function openssl(dir: string, ...args: string[]) {
  execFileSync('openssl', args, { cwd: dir, stdio: 'ignore' });
}

function get(url: string, options: https.RequestOptions): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    https
      .get(url, options, (res) => {
        let body = '';
        res.on('data', (c) => (body += c));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
      })
      .on('error', reject);
  });
}

describe('TLS connectors', () => {
  let gateway: RunningGateway;
  let base: string;
  let port: number;
  const pem = (name: string) => readFileSync(path.join(base, 'config', name));

  beforeAll(async () => {
    base = instanceDirectory({
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
    });
    gateway = await startGateway({ base, adminConnectors: true });
  });

  afterAll(async () => {
    await gateway?.stop();
  });

  it('serves HTTPS with the configured certificate, and tells handlers the connection is secure', async () => {
    const response = await get(`https://localhost:${port}/`, { ca: pem('ca.pem') });
    expect(response).toEqual({ status: 200, body: 'secure=true certs=0' });
  });

  it('passes a client certificate to the handlers when one is presented', async () => {
    const response = await get(`https://localhost:${port}/`, {
      ca: pem('ca.pem'),
      cert: pem('client.pem'),
      key: pem('client.key'),
    });
    expect(response).toEqual({ status: 200, body: 'secure=true certs=1' });
  });

  it('is refused by a client that does not trust the certificate', async () => {
    await expect(get(`https://localhost:${port}/`, {})).rejects.toThrow(/certificate/i);
  });
});
