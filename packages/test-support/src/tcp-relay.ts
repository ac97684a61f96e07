import net from 'node:net';

/**
 * A TCP relay in front of a service (Redis), to make it fail for one test without touching the
 * service that other tests share: `cut` refuses connections (an outage), `freeze` keeps accepting
 * them but passes nothing on in either direction (a server that hangs: what a network partition or a
 * stopped process looks like to a client).
 */
export interface TcpRelay {
  /** `<scheme>://127.0.0.1:<relay port>`, the scheme of the target's URL. */
  readonly url: string;
  /** Closes every connection and stops listening: connecting is refused. */
  cut(): Promise<void>;
  /** Listens again on the same port. */
  restore(): Promise<void>;
  /** Accepts connections, but passes no byte on until `thaw`. */
  freeze(): void;
  /** Passes on again what was held, and what comes next. */
  thaw(): void;
  close(): Promise<void>;
}

export async function startTcpRelay(target: string): Promise<TcpRelay> {
  const { protocol, hostname, port } = new URL(target);
  const pairs = new Set<[net.Socket, net.Socket]>();
  let frozen = false;
  const join = ([client, upstream]: [net.Socket, net.Socket]) => client.pipe(upstream).pipe(client);
  const server = net.createServer((client) => {
    const upstream = net.connect(Number(port), hostname);
    const pair: [net.Socket, net.Socket] = [client, upstream];
    pairs.add(pair);
    for (const socket of pair) {
      socket.on('error', () => {});
      socket.on('close', () => {
        pairs.delete(pair);
        client.destroy();
        upstream.destroy();
      });
    }
    if (!frozen) join(pair);
  });
  const listen = (at: number) =>
    new Promise<void>((resolve) => server.listen(at, '127.0.0.1', () => resolve()));
  await listen(0);
  const relayPort = (server.address() as net.AddressInfo).port;
  const closeAll = () =>
    new Promise<void>((resolve) => {
      if (!server.listening) return resolve();
      server.close(() => resolve());
      for (const pair of pairs) for (const socket of pair) socket.destroy();
    });
  return {
    url: `${protocol}//127.0.0.1:${relayPort}`,
    cut: closeAll,
    restore: () => listen(relayPort),
    freeze() {
      frozen = true;
      for (const [client, upstream] of pairs) {
        client.unpipe(upstream);
        upstream.unpipe(client);
      }
    },
    thaw() {
      frozen = false;
      for (const pair of pairs) join(pair);
    },
    close: closeAll,
  };
}
