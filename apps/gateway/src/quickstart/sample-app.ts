import type { AddressInfo } from 'node:net';
import { http } from '../server/node-http.ts';

/**
 * The small application the quickstart proxies `/app/*` to. It answers with what it received, so a
 * person can see what the gateway changed on the way (X-Forwarded-For, Host ...).
 */
export async function startSampleApp(): Promise<{ url: string; close(): Promise<void> }> {
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const body = JSON.stringify(
        {
          application: 'Portico quickstart sample application',
          method: req.method,
          url: req.url,
          headers: req.headers,
          body: Buffer.concat(chunks).toString('utf8'),
        },
        null,
        2,
      );
      res.writeHead(200, { 'Content-Type': 'application/json', 'Content-Length': Buffer.byteLength(body) });
      res.end(body);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  server.unref();
  return {
    url: `http://127.0.0.1:${port}`,
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
}
