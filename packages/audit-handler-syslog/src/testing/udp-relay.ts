import dgram from 'node:dgram';

/**
 * A UDP relay in front of the daemon: `cut` unbinds its port (the handler's connected socket is told
 * the port is unreachable, as when the daemon is stopped), `restore` binds it again.
 */
export async function startUdpRelay(host: string, port: number) {
  const upstream = dgram.createSocket('udp4');
  let front: dgram.Socket | undefined;
  let relayed = 0;
  const bind = (at: number) =>
    new Promise<number>((resolve) => {
      const socket = dgram.createSocket('udp4');
      socket.on('message', (data) => {
        relayed++;
        upstream.send(data, port, host);
      });
      socket.bind(at, '127.0.0.1', () => {
        front = socket;
        resolve(socket.address().port);
      });
    });
  const relayPort = await bind(0);
  const unbind = () =>
    new Promise<void>((resolve) => {
      const socket = front;
      front = undefined;
      if (socket === undefined) return resolve();
      socket.close(() => resolve());
    });
  return {
    port: relayPort,
    relayed: () => relayed,
    cut: unbind,
    restore: () => bind(relayPort).then(() => undefined),
    async close() {
      await unbind();
      await new Promise<void>((resolve) => upstream.close(() => resolve()));
    },
  };
}
