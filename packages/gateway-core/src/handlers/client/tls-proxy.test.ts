import { execFileSync } from 'node:child_process';
import { once } from 'node:events';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import http from 'node:http';
import https from 'node:https';
import net, { type AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { TLSSocket } from 'node:tls';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { parseConfig } from '../../config/parse-config.ts';
import { Context } from '../../context/context.ts';
import { ErrorCode } from '../../errors.ts';
import type { HeapletContext } from '../../heap/heaplet.ts';
import { Request } from '../../http/message.ts';
import { createMemoryLogger } from '../../logging.ts';
import { ClientHandler, type ClientHandlerOptions } from './client-handler.ts';
import { UpstreamError } from './errors.ts';
import { ClientHandlerHeaplet } from './heaplets.ts';

let dir: string;
const pem = (name: string) => path.join(dir, name);

function openssl(...args: string[]): void {
  execFileSync('openssl', args, { cwd: dir, stdio: 'pipe' });
}

/** A key and a certificate signed by the test CA, with the given subject alternative names. */
function issue(name: string, subject: string, extensions: string): void {
  writeFileSync(pem(`${name}.ext`), extensions);
  openssl(
    ...['req', '-new', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes'],
    ...['-keyout', `${name}.key`, '-out', `${name}.csr`, '-subj', subject],
  );
  openssl(
    ...['x509', '-req', '-in', `${name}.csr`, '-CA', 'ca.pem', '-CAkey', 'ca.key', '-CAcreateserial'],
    ...['-out', `${name}.pem`, '-days', '2', '-extfile', `${name}.ext`],
  );
}

beforeAll(() => {
  dir = mkdtempSync(path.join(tmpdir(), 'portico-tls-'));
  const ec = ['-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes', '-days', '2'];
  // A self-signed server certificate: trusted only by naming the file itself.
  openssl(
    'req',
    '-x509',
    ...ec,
    '-keyout',
    'self.key',
    '-out',
    'self.pem',
    '-subj',
    '/CN=127.0.0.1',
    '-addext',
    'subjectAltName=IP:127.0.0.1',
  );
  // A CA issuing a server certificate, one for the wrong host, and a client certificate.
  openssl(
    ...['req', '-x509', ...ec, '-keyout', 'ca.key', '-out', 'ca.pem', '-subj', '/CN=Portico Test CA'],
    ...['-addext', 'basicConstraints=critical,CA:TRUE', '-addext', 'keyUsage=critical,keyCertSign,cRLSign'],
  );
  issue(
    'server',
    '/CN=localhost',
    'subjectAltName=DNS:localhost,IP:127.0.0.1\nextendedKeyUsage=serverAuth\n',
  );
  issue('wrong', '/CN=wrong.example', 'subjectAltName=DNS:wrong.example\nextendedKeyUsage=serverAuth\n');
  issue('client', '/CN=portico-client', 'extendedKeyUsage=clientAuth\n');
  openssl('pkey', '-in', 'client.key', '-aes256', '-passout', 'pass:s3cret', '-out', 'client-encrypted.key');
}, 30_000);

afterAll(() => rmSync(dir, { recursive: true, force: true }));

const closers: (() => void)[] = [];
const handlers: ClientHandler[] = [];
afterEach(async () => {
  await Promise.all(handlers.splice(0).map((h) => h.close()));
  for (const close of closers.splice(0)) close();
});

async function listen<S extends net.Server>(server: S): Promise<number> {
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  closers.push(() => {
    (server as unknown as http.Server).closeAllConnections?.();
    server.close();
  });
  return (server.address() as AddressInfo).port;
}

/** An https upstream answering with what it saw of the TLS session. */
async function httpsUpstream(cert: string, options: https.ServerOptions = {}): Promise<string> {
  const server = https.createServer(
    { key: readFileSync(pem(`${cert}.key`)), cert: readFileSync(pem(`${cert}.pem`)), ...options },
    (req, res) => {
      const socket = req.socket as TLSSocket;
      const peer = socket.getPeerCertificate();
      res.end(
        JSON.stringify({
          protocol: socket.getProtocol(),
          cipher: socket.getCipher().standardName,
          client: peer?.subject?.CN ?? null,
        }),
      );
    },
  );
  return `https://127.0.0.1:${await listen(server)}`;
}

function client(options: ClientHandlerOptions): ClientHandler {
  const handler = new ClientHandler({ logger: createMemoryLogger(), retries: false, ...options });
  handlers.push(handler);
  return handler;
}

async function call(handler: ClientHandler, uri: string): Promise<Record<string, unknown>> {
  const response = await handler.handle(new Context(), new Request({ uri }));
  return JSON.parse(await response.entity.text()) as Record<string, unknown>;
}

async function failure(handler: ClientHandler, uri: string): Promise<UpstreamError> {
  const error = await handler.handle(new Context(), new Request({ uri })).catch((e: unknown) => e);
  expect(error).toBeInstanceOf(UpstreamError);
  return error as UpstreamError;
}

/** The handler a configuration declares, made the way the heap makes it. */
function fromConfig(config: Record<string, unknown>): ClientHandler {
  const logger = createMemoryLogger();
  const context = {
    name: 'test',
    type: 'ClientHandler',
    config: parseConfig(ClientHandlerHeaplet.config, config, { jsonPath: '$.heap[0].config' }),
    // The heap's one part the client heaplets read: the gateway's metrics (none here).
    heap: { shared: (_key: string, make: (l: typeof logger) => unknown) => make(logger) } as never,
    logger,
    file: 'config.json',
    jsonPath: '$.heap[0].config',
    environment: { baseDirectory: dir, configDirectory: dir, scriptsDirectory: dir, temporaryDirectory: dir },
    configAt: (...keys) => ({ jsonPath: ['$.heap[0].config', ...keys].join('.') }),
    onDestroy: () => {},
  } satisfies HeapletContext<unknown>;
  const handler = ClientHandlerHeaplet.create(context) as ClientHandler;
  handlers.push(handler);
  return handler;
}

describe('TLS to the upstream', () => {
  it('rejects a self-signed certificate by default', async () => {
    const url = await httpsUpstream('self');
    const error = await failure(client({}), url);
    expect(error).toMatchObject({ code: ErrorCode.UPSTREAM, failure: 'tls', upstreamStatus: 502 });
    expect(error.message).toMatch(/TLS handshake with https:\/\/127\.0\.0\.1:\d+ failed/);
  });

  it('accepts it when the certificate file is the trust store', async () => {
    const url = await httpsUpstream('self');
    expect(await call(client({ tls: { caFiles: [pem('self.pem')] } }), url)).toMatchObject({ client: null });
  });

  it('accepts it with the insecure flag, or a TrustAllManager', async () => {
    const url = await httpsUpstream('self');
    expect(await call(client({ tls: { trustAllCertificates: true } }), url)).toHaveProperty('protocol');
    expect(await call(fromConfig({ trustManager: { type: 'TrustAllManager' } }), url)).toHaveProperty(
      'protocol',
    );
    const inline = { type: 'ClientTlsOptions', config: { trustManager: [{ type: 'TrustAllManager' }] } };
    expect(await call(fromConfig({ tls: inline }), url)).toHaveProperty('protocol');
  });

  it('trusts a CA read from a path relative to the instance directory', async () => {
    const url = await httpsUpstream('server');
    expect(await call(fromConfig({ tls: { caFiles: 'ca.pem' } }), url)).toHaveProperty('protocol');
  });

  it('checks the host name (STRICT), and skips that check with ALLOW_ALL', async () => {
    const url = await httpsUpstream('wrong');
    const error = await failure(client({ tls: { caFiles: [pem('ca.pem')] } }), url);
    expect(error).toMatchObject({ failure: 'tls' });
    expect((error.details.cause as { code?: string }).code).toBe('ERR_TLS_CERT_ALTNAME_INVALID');
    const allowAll = client({ tls: { caFiles: [pem('ca.pem')], hostnameVerifier: 'ALLOW_ALL' } });
    expect(await call(allowAll, url)).toHaveProperty('protocol');
    // ALLOW_ALL skips the name check only: an untrusted certificate is still refused.
    const untrusted = await failure(client({ tls: { hostnameVerifier: 'ALLOW_ALL' } }), url);
    expect(untrusted.failure).toBe('tls');
  });

  it('presents a client certificate for mutual TLS, with an encrypted key too', async () => {
    const ca = readFileSync(pem('ca.pem'));
    const url = await httpsUpstream('server', { requestCert: true, rejectUnauthorized: true, ca });
    const without = await failure(client({ tls: { caFiles: [pem('ca.pem')] } }), url);
    expect(without.code).toBe(ErrorCode.UPSTREAM);
    const mutual = client({
      tls: { caFiles: [pem('ca.pem')], certificateFile: pem('client.pem'), keyFile: pem('client.key') },
    });
    expect(await call(mutual, url)).toMatchObject({ client: 'portico-client' });
    const encrypted = fromConfig({
      tls: {
        caFiles: ['ca.pem'],
        certificateFile: 'client.pem',
        keyFile: 'client-encrypted.key',
        keyPassword: 's3cret',
      },
    });
    expect(await call(encrypted, url)).toMatchObject({ client: 'portico-client' });
  });

  it('fails the configuration, not the first request, on a wrong key passphrase or a missing file', () => {
    expect(() =>
      fromConfig({
        tls: { certificateFile: 'client.pem', keyFile: 'client-encrypted.key', keyPassword: 'wrong' },
      }),
    ).toThrow(expect.objectContaining({ code: ErrorCode.CONFIG }));
    expect(() => fromConfig({ caFiles: ['missing.pem'] })).toThrow(
      expect.objectContaining({
        code: ErrorCode.CONFIG,
        details: expect.objectContaining({ file: 'config.json' }),
      }),
    );
    expect(() => fromConfig({ tls: { certificateFile: 'client.pem' } })).toThrow(
      /needs both certificateFile and keyFile/,
    );
  });

  it('limits the protocols and cipher suites, taking Java cipher suite names', async () => {
    const url = await httpsUpstream('server');
    const handler = fromConfig({
      hostnameVerifier: 'STRICT',
      tls: {
        caFiles: ['ca.pem'],
        sslEnabledProtocols: ['TLSv1.2'],
        sslCipherSuites: ['TLS_ECDHE_ECDSA_WITH_AES_256_GCM_SHA384'],
      },
    });
    expect(await call(handler, url)).toMatchObject({
      protocol: 'TLSv1.2',
      cipher: 'TLS_ECDHE_ECDSA_WITH_AES_256_GCM_SHA384',
    });
    expect(await call(fromConfig({ tls: { caFiles: ['ca.pem'] } }), url)).toMatchObject({
      protocol: 'TLSv1.3',
    });
  });
});

describe('an outbound proxy', () => {
  interface ProxySeen {
    method: string;
    url: string;
    authorization: string | undefined;
  }

  /** A forward proxy: absolute-form requests relayed with node:http, CONNECT tunnelled with node:net. */
  async function forwardProxy(credentials?: string) {
    const seen: ProxySeen[] = [];
    const expected = credentials && `Basic ${Buffer.from(credentials).toString('base64')}`;
    const server = http.createServer((req, res) => {
      seen.push({ method: req.method!, url: req.url!, authorization: req.headers['proxy-authorization'] });
      if (expected && req.headers['proxy-authorization'] !== expected) {
        res.writeHead(407, { 'Proxy-Authenticate': 'Basic realm="proxy"' }).end();
        return;
      }
      const target = new URL(req.url!);
      const headers = { ...req.headers };
      delete headers['proxy-authorization'];
      const onward = http.request(
        {
          host: target.hostname,
          port: target.port,
          path: `${target.pathname}${target.search}`,
          method: req.method,
          headers,
        },
        (answer) => {
          res.writeHead(answer.statusCode!, answer.rawHeaders);
          answer.pipe(res);
        },
      );
      onward.on('error', () => res.destroy());
      req.pipe(onward);
    });
    server.on('connect', (req: http.IncomingMessage, socket: net.Socket, head: Buffer) => {
      seen.push({ method: 'CONNECT', url: req.url!, authorization: req.headers['proxy-authorization'] });
      socket.on('error', () => {});
      if (expected && req.headers['proxy-authorization'] !== expected) {
        socket.end('HTTP/1.1 407 Proxy Authentication Required\r\nContent-Length: 0\r\n\r\n');
        return;
      }
      const [host, port] = req.url!.split(':');
      const onward = net.connect(Number(port), host!, () => {
        socket.write('HTTP/1.1 200 Connection Established\r\n\r\n');
        onward.write(head);
        onward.pipe(socket);
        socket.pipe(onward);
      });
      onward.on('error', () => socket.destroy());
      socket.on('close', () => onward.destroy());
    });
    const port = await listen(server);
    return { uri: `http://127.0.0.1:${port}`, seen };
  }

  async function plainUpstream() {
    const seen: string[][] = [];
    const server = http.createServer((req, res) => {
      seen.push(req.rawHeaders);
      res.end(`upstream saw ${req.url}`);
    });
    return { url: `http://127.0.0.1:${await listen(server)}`, seen };
  }

  it('sends http requests in absolute form through the proxy, with its credentials', async () => {
    const proxy = await forwardProxy('user:pw');
    const up = await plainUpstream();
    const handler = client({ proxy: { kind: 'http', uri: proxy.uri, username: 'user', password: 'pw' } });
    const request = new Request({
      uri: `${up.url}/a%2Fb?q=1`,
      headers: { 'Proxy-Authorization': 'Basic Y2xpZW50OnNlY3JldA==' },
    });
    const response = await handler.handle(new Context(), request);
    expect(await response.entity.text()).toBe('upstream saw /a%2Fb?q=1');
    expect(proxy.seen).toEqual([
      {
        method: 'GET',
        url: `${up.url}/a%2Fb?q=1`,
        authorization: `Basic ${Buffer.from('user:pw').toString('base64')}`,
      },
    ]);
    // The client's own proxy credentials never travel on.
    expect(up.seen[0]!.map((h) => h.toLowerCase())).not.toContain('proxy-authorization');
  });

  it('fails with an upstream error when the proxy refuses the credentials', async () => {
    const proxy = await forwardProxy('user:pw');
    const up = await plainUpstream();
    const error = await failure(client({ proxy: { kind: 'http', uri: proxy.uri } }), up.url);
    expect(error.code).toBe(ErrorCode.UPSTREAM);
    expect(up.seen).toEqual([]);
  });

  it('tunnels https through CONNECT, verifying the upstream certificate end to end', async () => {
    const proxy = await forwardProxy();
    const url = await httpsUpstream('server');
    const handler = fromConfig({
      proxyOptions: { type: 'ProxyOptions', config: { uri: proxy.uri } },
      caFiles: ['ca.pem'],
    });
    expect(await call(handler, url)).toHaveProperty('protocol');
    expect(proxy.seen.map((s) => `${s.method} ${s.url}`)).toEqual([`CONNECT ${new URL(url).host}`]);
    const untrusted = await failure(fromConfig({ proxy: proxy.uri }), url);
    expect(untrusted.failure).toBe('tls');
  });

  it('uses HTTP_PROXY with systemProxy', async () => {
    const proxy = await forwardProxy();
    const up = await plainUpstream();
    const saved = { HTTP_PROXY: process.env.HTTP_PROXY, NO_PROXY: process.env.NO_PROXY };
    process.env.HTTP_PROXY = proxy.uri;
    process.env.NO_PROXY = '';
    try {
      const handler = fromConfig({ systemProxy: true });
      const response = await handler.handle(new Context(), new Request({ uri: `${up.url}/via-env` }));
      expect(await response.entity.text()).toBe('upstream saw /via-env');
      expect(proxy.seen.map((s) => s.url)).toEqual([`${up.url}/via-env`]);
    } finally {
      for (const [key, value] of Object.entries(saved)) {
        if (value === undefined) delete process.env[key];
        else process.env[key] = value;
      }
    }
  });
});
