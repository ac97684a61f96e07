import http from 'node:http';
import net, { type AddressInfo } from 'node:net';

export interface Upstream {
  url: string;
  server: http.Server;
  /** Requests received: method, url, headers, body length. */
  received: { method: string; url: string; headers: http.IncomingHttpHeaders; bodyLength: number }[];
  close(): Promise<void>;
}

/**
 * A real upstream application on a free loopback port. By default it answers with a JSON echo of
 * what it received; `handler` replaces that.
 */
export async function startUpstream(handler?: http.RequestListener): Promise<Upstream> {
  const received: Upstream['received'] = [];
  const server = http.createServer((req, res) => {
    if (handler) return handler(req, res);
    let bodyLength = 0;
    req.on('data', (chunk: Buffer) => (bodyLength += chunk.length));
    req.on('end', () => {
      received.push({ method: req.method!, url: req.url!, headers: req.headers, bodyLength });
      const body = JSON.stringify({ method: req.method, url: req.url, headers: req.headers, bodyLength });
      res.writeHead(200, {
        'Content-Type': 'application/json',
        'Content-Length': Buffer.byteLength(body),
        'X-Upstream': 'yes',
      });
      res.end(req.method === 'HEAD' ? undefined : body);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    server,
    received,
    close: () =>
      new Promise((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/**
 * A real upstream that reads each request's body whole, records the request in `received`, then
 * lets `respond` answer it.
 */
export async function startBufferingUpstream(
  respond: (req: http.IncomingMessage, res: http.ServerResponse, body: Buffer) => void,
): Promise<Upstream> {
  const upstream: Upstream = await startUpstream((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const body = Buffer.concat(chunks);
      upstream.received.push({
        method: req.method!,
        url: req.url!,
        headers: req.headers,
        bodyLength: body.length,
      });
      respond(req, res, body);
    });
  });
  return upstream;
}

export interface RawUpstream {
  url: string;
  server: net.Server;
  close(): Promise<void>;
}

/**
 * An upstream on a free loopback port that is a bare TCP server: `onConnection` writes exactly the
 * bytes each test needs, however malformed or endless. A connection's errors (the gateway letting
 * go mid-answer) are expected and ignored.
 */
export async function startRawUpstream(onConnection: (socket: net.Socket) => void): Promise<RawUpstream> {
  const server = net.createServer((socket) => {
    socket.on('error', () => {});
    onConnection(socket);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    server,
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
}
