import http from 'node:http';
import type { AddressInfo } from 'node:net';

/** A real HTTP server on a free port of 127.0.0.1, for a test's upstream. */
export interface TestServer {
  /** `http://127.0.0.1:<port>`. */
  url: string;
  server: http.Server;
  /** Closes the server and every connection it holds. */
  close(): Promise<void>;
}

export async function startHttpServer(listener: http.RequestListener): Promise<TestServer> {
  const server = http.createServer(listener);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    server,
    close: async () => {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
