import net from 'node:net';

/**
 * A constant-rate (open-loop) HTTP/1.1 load generator, the model of wrk2: request k is due at
 * t0 + k / rate whatever happened to the earlier ones, and its latency is measured from that due time,
 * so a stall is charged to every request it delayed (no coordinated omission). Requests go out on a
 * pool of keep-alive connections, one request in flight per connection; a request due while every
 * connection is busy waits in the generator, and that wait counts.
 *
 * The generator's own timer slack is not charged to the server: a request that found a connection idle
 * at its due time is timed from when it actually left; one that had to wait for a connection (all of
 * them busy with the server) is charged that wait too. Requests that left more than 2 ms after they
 * could have (`lateSends`) mean the generator itself lagged, and its figures are suspect.
 *
 * Why not autocannon's `overallRate`: autocannon gives each connection a quota per second and sends
 * it back to back, so at 50 % load the connections run closed-loop at full speed for half of each
 * second and then idle; its "correction" back-fills samples at a 1 ms interval whatever the rate.
 */
export interface OpenLoopOptions {
  url: string;
  /** Requests per second. */
  rate: number;
  seconds: number;
  connections: number;
  headers?: Readonly<Record<string, string>>;
  /** A request without a complete response after this long counts as a timeout (default 10 s). */
  timeoutMs?: number;
}

export interface OpenLoopResult {
  targetRate: number;
  seconds: number;
  sent: number;
  completed: number;
  achievedRate: number;
  non2xx: number;
  errors: number;
  timeouts: number;
  /** Requests that left the generator more than LATE_MS after they could have (the generator lagged). */
  lateSends: number;
  latencyMs: { p50: number; p90: number; p99: number; p99_9: number; max: number; mean: number };
  generatorCpuPercent: number;
}

const TICK_MS = 1;
/** Slack beyond the timer granularity: a send this late means the generator itself lagged. */
const LATE_MS = 2;

class Connection {
  socket: net.Socket | undefined;
  busy = false;
  /** When the request in flight started counting (see above). */
  startAt = 0;
  sentAt = 0;
  /** When the connection last became free. */
  idleSince = 0;
  #buffer: Buffer | undefined;
  #state: 'head' | 'body' | 'chunk-size' | 'chunk-data' | 'chunk-crlf' | 'trailers' = 'head';
  #remaining = 0;
  #status = 0;
  #close = false;
  readonly #host: string;
  readonly #port: number;
  readonly #onResponse: (connection: Connection, status: number) => void;
  readonly #onBroken: (connection: Connection, wasBusy: boolean) => void;

  constructor(
    host: string,
    port: number,
    onResponse: (connection: Connection, status: number) => void,
    onBroken: (connection: Connection, wasBusy: boolean) => void,
  ) {
    this.#host = host;
    this.#port = port;
    this.#onResponse = onResponse;
    this.#onBroken = onBroken;
  }

  connect(): Promise<void> {
    this.#state = 'head';
    this.#buffer = undefined;
    return new Promise((resolve, reject) => {
      const socket = net.connect({ host: this.#host, port: this.#port, noDelay: true });
      let connected = false;
      this.socket = socket;
      socket.once('connect', () => {
        connected = true;
        resolve();
      });
      socket.once('error', (error) => reject(error));
      socket.on('data', (chunk: Buffer) => this.#data(chunk));
      socket.on('close', () => {
        // A connection that never connected is reported by the rejection alone.
        if (this.socket !== socket || !connected) return;
        const wasBusy = this.busy;
        this.busy = false;
        this.#onBroken(this, wasBusy);
      });
      socket.on('error', () => {});
    });
  }

  /** Sends the request due at `dueAt`; returns the generator's slack (ms it left later than it could). */
  send(request: Buffer, dueAt: number, now: number): number {
    this.busy = true;
    this.sentAt = now;
    // A perfect generator sends at the due time, or as soon as a connection frees up after it.
    const couldHaveSent = Math.max(dueAt, this.idleSince);
    this.startAt = dueAt + (now - couldHaveSent);
    this.socket?.write(request);
    return now - couldHaveSent;
  }

  destroy(): void {
    this.socket?.destroy();
  }

  #data(chunk: Buffer): void {
    const data = this.#buffer ? Buffer.concat([this.#buffer, chunk]) : chunk;
    this.#buffer = undefined;
    let offset = 0;
    while (offset < data.length) {
      if (this.#state === 'head') {
        const end = data.indexOf('\r\n\r\n', offset);
        if (end < 0) {
          this.#buffer = data.subarray(offset);
          return;
        }
        this.#head(data.toString('latin1', offset, end));
        offset = end + 4;
        if (this.#state === 'head') this.#complete();
      } else if (this.#state === 'body' || this.#state === 'chunk-data') {
        const take = Math.min(this.#remaining, data.length - offset);
        offset += take;
        this.#remaining -= take;
        if (this.#remaining === 0) {
          if (this.#state === 'body') this.#complete();
          else this.#state = 'chunk-crlf';
        }
      } else {
        // chunk-size, chunk-crlf and trailers are line based.
        const end = data.indexOf('\r\n', offset);
        if (end < 0) {
          this.#buffer = data.subarray(offset);
          return;
        }
        const line = data.toString('latin1', offset, end);
        offset = end + 2;
        if (this.#state === 'chunk-size') {
          this.#remaining = Number.parseInt(line, 16);
          this.#state = this.#remaining > 0 ? 'chunk-data' : 'trailers';
        } else if (this.#state === 'chunk-crlf') {
          this.#state = 'chunk-size';
        } else if (line === '') {
          this.#complete();
        }
      }
    }
  }

  #head(head: string): void {
    this.#status = Number(head.slice(9, 12));
    const lower = head.toLowerCase();
    this.#close = /\r\nconnection:\s*close/.test(lower);
    if (/\r\ntransfer-encoding:[^\r]*chunked/.test(lower)) {
      this.#state = 'chunk-size';
      return;
    }
    const length = /\r\ncontent-length:\s*(\d+)/.exec(lower);
    this.#remaining = length ? Number(length[1]) : 0;
    this.#state = this.#remaining > 0 ? 'body' : 'head';
  }

  #complete(): void {
    this.#state = 'head';
    this.busy = false;
    this.#onResponse(this, this.#status);
    if (this.#close) this.socket?.destroy();
  }
}

export async function runOpenLoop(options: OpenLoopOptions): Promise<OpenLoopResult> {
  const url = new URL(options.url);
  const host = url.hostname;
  const port = Number(url.port || 80);
  const extra = Object.entries(options.headers ?? {})
    .map(([name, value]) => `${name}: ${value}\r\n`)
    .join('');
  const request = Buffer.from(
    `GET ${url.pathname}${url.search} HTTP/1.1\r\nHost: ${url.host}\r\n${extra}\r\n`,
  );
  const total = Math.max(1, Math.round(options.rate * options.seconds));
  const intervalMs = 1000 / options.rate;
  const timeoutMs = options.timeoutMs ?? 10_000;
  const latencies = new Float64Array(total);
  let completed = 0;
  let non2xx = 0;
  let errors = 0;
  let timeouts = 0;
  let lateSends = 0;
  let sent = 0;
  let finished = 0;
  let t0 = 0;
  let stopping = false;
  const idle: Connection[] = [];
  let idleHead = 0;

  const takeIdle = (): Connection | undefined => {
    while (idleHead < idle.length) {
      const connection = idle[idleHead++]!;
      if (idleHead > 1024) {
        idle.splice(0, idleHead);
        idleHead = 0;
      }
      if (!connection.busy && connection.socket && !connection.socket.destroyed) return connection;
    }
    return undefined;
  };

  const dispatch = () => {
    if (stopping) return;
    const now = performance.now();
    const due = Math.min(total, Math.floor((now - t0) / intervalMs) + 1);
    while (sent < due) {
      const connection = takeIdle();
      if (!connection) break;
      if (connection.send(request, t0 + sent * intervalMs, now) > LATE_MS) lateSends++;
      sent++;
    }
  };

  const onResponse = (connection: Connection, status: number) => {
    const now = performance.now();
    latencies[completed++] = now - connection.startAt;
    finished++;
    if (status < 200 || status > 299) non2xx++;
    connection.idleSince = now;
    idle.push(connection);
    dispatch();
  };

  const reconnect = (connection: Connection) => {
    if (stopping) return;
    connection
      .connect()
      .then(() => {
        connection.idleSince = performance.now();
        idle.push(connection);
        dispatch();
      })
      .catch(() => {
        errors++;
        if (!stopping) setTimeout(() => reconnect(connection), 10);
      });
  };

  const onBroken = (connection: Connection, wasBusy: boolean) => {
    if (wasBusy) {
      errors++;
      finished++;
    }
    reconnect(connection);
  };

  const pool = Array.from(
    { length: options.connections },
    () => new Connection(host, port, onResponse, onBroken),
  );
  try {
    await Promise.all(pool.map((connection) => connection.connect()));
  } catch (error) {
    stopping = true;
    for (const connection of pool) connection.socket?.destroy();
    throw error;
  }
  idle.push(...pool);

  const cpuBefore = process.cpuUsage();
  t0 = performance.now();
  const endBy = t0 + options.seconds * 1000 + timeoutMs + 1000;
  await new Promise<void>((resolve) => {
    const tick = () => {
      const now = performance.now();
      for (const connection of pool) {
        if (connection.busy && now - connection.sentAt > timeoutMs) {
          timeouts++;
          errors++;
          finished++;
          connection.busy = false;
          connection.destroy();
        }
      }
      dispatch();
      if ((sent === total && finished >= total) || now > endBy) return resolve();
      setTimeout(tick, TICK_MS);
    };
    tick();
  });
  const elapsedMs = performance.now() - t0;
  const cpu = process.cpuUsage(cpuBefore);
  stopping = true;
  for (const connection of pool) connection.destroy();
  // Whatever never got an answer (deadline reached) is a timeout.
  const unanswered = Math.max(0, sent - finished);
  timeouts += unanswered;
  errors += unanswered;

  const sorted = latencies.subarray(0, completed).sort();
  const at = (q: number) =>
    completed === 0 ? Number.NaN : sorted[Math.min(completed - 1, Math.ceil(q * completed) - 1)]!;
  let sum = 0;
  for (const value of sorted) sum += value;
  return {
    targetRate: options.rate,
    seconds: options.seconds,
    sent,
    completed,
    achievedRate: round(completed / options.seconds, 0),
    non2xx,
    errors,
    timeouts,
    lateSends,
    latencyMs: {
      p50: round(at(0.5), 3),
      p90: round(at(0.9), 3),
      p99: round(at(0.99), 3),
      p99_9: round(at(0.999), 3),
      max: round(completed ? sorted[completed - 1]! : Number.NaN, 3),
      mean: round(completed ? sum / completed : Number.NaN, 3),
    },
    generatorCpuPercent: round(((cpu.user + cpu.system) / 1000 / elapsedMs) * 100, 1),
  };
}

function round(value: number, digits: number): number {
  const factor = 10 ** digits;
  return Math.round(value * factor) / factor;
}
