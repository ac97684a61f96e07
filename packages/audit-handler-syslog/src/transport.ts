import dgram from 'node:dgram';
import net from 'node:net';

/** What a transport did: for the tests, the bench and whoever debugs a lost connection. */
export interface TransportCounters {
  /** Messages handed to the network (for TCP: whose bytes the socket took). */
  sent: number;
  /** Connections opened (TCP); the first one included. */
  connects: number;
  /** Attempts to connect that failed or timed out. */
  connectFailures: number;
  /** Connections that ended while the handler was using them (the daemon restarted, the link dropped). */
  disconnects: number;
  /** Sends that failed: their batch is rejected, to be published again. */
  sendFailures: number;
  /**
   * Connections the daemon reset (TCP): a daemon that closes with messages unread in its socket
   * buffer resets the connection, and those messages, written as far as the handler knows, are lost.
   */
  resets: number;
}

/** Sends formatted syslog messages to the daemon. */
export interface Transport {
  readonly counters: TransportCounters;
  /** Resolves once every message of `messages` is handed to the network; rejects if any may not be. */
  send(messages: readonly string[]): Promise<void>;
  close(): Promise<void>;
}

const newCounters = (): TransportCounters => ({
  sent: 0,
  connects: 0,
  connectFailures: 0,
  disconnects: 0,
  sendFailures: 0,
  resets: 0,
});

/**
 * RFC 5424 over TCP with RFC 6587 octet-counting framing (`<length> <message>`, no trailer, so a
 * message may hold any byte). The connection is opened when first needed, within `connectTimeout`
 * milliseconds, and opened again on the next send after it ends: a daemon that restarted is
 * reconnected to by the next batch, or by the service's retry of the batch that failed.
 */
export class TcpTransport implements Transport {
  readonly counters = newCounters();
  readonly #host: string;
  readonly #port: number;
  readonly #connectTimeout: number;
  #socket: net.Socket | undefined;
  #connecting: Promise<net.Socket> | undefined;
  #closed = false;

  constructor(host: string, port: number, connectTimeout: number) {
    this.#host = host;
    this.#port = port;
    this.#connectTimeout = connectTimeout;
  }

  async send(messages: readonly string[]): Promise<void> {
    if (messages.length === 0) return;
    const socket = await this.#connection();
    const frames = Buffer.from(messages.map((m) => `${Buffer.byteLength(m)} ${m}`).join(''));
    try {
      await new Promise<void>((resolve, reject) => {
        const onClose = () => reject(new Error(`the connection to ${this.#where()} closed`));
        socket.once('close', onClose);
        socket.write(frames, (error) => {
          socket.off('close', onClose);
          if (error) reject(error);
          else resolve();
        });
      });
    } catch (error) {
      this.counters.sendFailures++;
      this.#drop(socket);
      throw error;
    }
    this.counters.sent += messages.length;
  }

  async close(): Promise<void> {
    this.#closed = true;
    const socket = this.#socket ?? (await this.#connecting?.catch(() => undefined));
    this.#socket = undefined;
    if (socket === undefined || socket.destroyed) return;
    await new Promise<void>((resolve) => {
      socket.once('close', () => resolve());
      socket.end();
      setTimeout(() => socket.destroy(), 1000).unref();
    });
  }

  #where(): string {
    return `${this.#host}:${this.#port}`;
  }

  #connection(): Promise<net.Socket> {
    if (this.#closed) return Promise.reject(new Error('the syslog handler is closed'));
    if (this.#socket !== undefined && !this.#socket.destroyed) return Promise.resolve(this.#socket);
    this.#connecting ??= this.#connect().finally(() => {
      this.#connecting = undefined;
    });
    return this.#connecting;
  }

  #connect(): Promise<net.Socket> {
    return new Promise<net.Socket>((resolve, reject) => {
      const socket = net.connect({ host: this.#host, port: this.#port, noDelay: true });
      const timer = setTimeout(() => {
        socket.destroy(
          new Error(
            `no connection to ${this.#where()} within the connectTimeout of ${this.#connectTimeout} ms`,
          ),
        );
      }, this.#connectTimeout);
      const failed = (error: Error) => {
        clearTimeout(timer);
        this.counters.connectFailures++;
        reject(error);
      };
      socket.once('error', failed);
      socket.once('connect', () => {
        clearTimeout(timer);
        socket.off('error', failed);
        this.counters.connects++;
        this.#socket = socket;
        // The daemon says nothing on this connection: an end or an error is the connection lost.
        socket.on('error', (error: NodeJS.ErrnoException) => {
          if (error.code === 'ECONNRESET') this.counters.resets++;
          this.#drop(socket);
        });
        socket.on('end', () => this.#drop(socket));
        socket.on('close', () => this.#drop(socket));
        socket.on('data', () => {});
        resolve(socket);
      });
    });
  }

  #drop(socket: net.Socket): void {
    if (this.#socket === socket) {
      this.#socket = undefined;
      if (!this.#closed) this.counters.disconnects++;
    }
    socket.destroy();
  }
}

/**
 * RFC 5424 over UDP (RFC 5426): one message per datagram. The socket is connected to the daemon, so
 * a daemon that is not listening is reported back (an ICMP port unreachable) and fails the sends
 * that follow, whose batch is then published again; datagrams sent before that report are lost.
 */
export class UdpTransport implements Transport {
  readonly counters = newCounters();
  readonly #host: string;
  readonly #port: number;
  #socket: Promise<dgram.Socket> | undefined;
  #error: Error | undefined;

  constructor(host: string, port: number) {
    this.#host = host;
    this.#port = port;
  }

  async send(messages: readonly string[]): Promise<void> {
    if (messages.length === 0) return;
    const socket = await this.#connected();
    this.#error = undefined;
    try {
      let sent = 0;
      await new Promise<void>((resolve, reject) => {
        for (const message of messages) {
          socket.send(message, (error) => {
            if (error) reject(error);
            else if (++sent === messages.length) resolve();
          });
        }
      });
      // A daemon that is not listening answers the first datagram with a port unreachable, which
      // comes back as the socket's error event: give it the turn of the event loop it takes.
      await new Promise((resolve) => setImmediate(resolve));
      await new Promise((resolve) => setImmediate(resolve));
      if (this.#error !== undefined) {
        const error = this.#error;
        this.#error = undefined;
        throw error;
      }
    } catch (error) {
      this.counters.sendFailures++;
      throw error;
    }
    this.counters.sent += messages.length;
  }

  async close(): Promise<void> {
    const socket = await this.#socket?.catch(() => undefined);
    this.#socket = undefined;
    if (socket !== undefined) await new Promise<void>((resolve) => socket.close(() => resolve()));
  }

  #connected(): Promise<dgram.Socket> {
    this.#socket ??= new Promise<dgram.Socket>((resolve, reject) => {
      const type = net.isIPv6(this.#host) ? 'udp6' : 'udp4';
      const socket = dgram.createSocket(type);
      socket.on('error', (error) => {
        this.#error = error;
      });
      socket.connect(this.#port, this.#host, (error?: Error) => {
        if (error) {
          this.counters.connectFailures++;
          this.#socket = undefined;
          socket.close();
          reject(error);
        } else {
          this.counters.connects++;
          resolve(socket);
        }
      });
    });
    return this.#socket;
  }
}
