import type http from 'node:http';
import type { Socket } from 'node:net';
import type { Duration, Logger, PluginManifest } from '@portico/gateway-core';
import { answerSocket, checkConfig, combineProblems, refuseExpectation } from '@portico/gateway-core/runtime';
import { addAnswering, afterAnswered, answering, answeringCount, removeAnswering } from './answering.ts';
import { createRequestListener } from './app.ts';
import { clusterWorkerScrape } from './cluster-metrics.ts';
import { Gateway } from './gateway.ts';
import { scheduleIdleCompaction } from './idle-compaction.ts';
import type { Instance } from './instance.ts';
import { type LogLevels, processLogLevels } from './log-levels.ts';
import { ServerMetrics } from './metrics.ts';
import { http as nodeHttp } from './node-http.ts';
import { createObserver } from './observer.ts';
import { release, serveInTurn, upgraded } from './pipelining.ts';
import { readAgain } from './read-again.ts';
import { openSessions } from './sessions.ts';
import { type AdminSettings, type ConnectorSettings, metricsSchema } from './settings.ts';
import { upgradeListener } from './upgrade.ts';

export interface RunningServer {
  gateway: Gateway;
  /** Where each connector listens, e.g. `http://127.0.0.1:8080`. */
  urls: string[];
  /** Stops accepting, lets in-flight requests finish (up to the grace period), destroys every heap. */
  stop(): Promise<void>;
}

export interface StartOptions {
  instance: Instance;
  logger: Logger;
  plugins?: readonly PluginManifest[];
  /** The log level's control (`<prefix>/api/logging`); by default the logger's own, if it has one. */
  logLevels?: LogLevels;
  /** Overrides the connectors of admin.json with one HTTP port (0 picks a free one). */
  port?: number;
  host?: string;
  /**
   * This process is one of the workers of `--workers N`: a scrape of its metrics endpoint answers
   * with every worker's metrics, summed by the primary (cluster-metrics.ts).
   */
  clusterWorker?: boolean;
}

/**
 * Loads the configuration and listens on every connector (admin.json `connectors`, default one HTTP
 * connector on 8080). Limits and timeouts come from admin.json `limits`; Node's parser already
 * rejects ambiguous framing (both Content-Length and Transfer-Encoding, conflicting Content-Lengths)
 * with 400 before any filter runs.
 */
export async function startServer(options: StartOptions): Promise<RunningServer> {
  const { instance, logger } = options;
  const metrics = await serverMetrics(instance);
  const gateway = await Gateway.load(instance, logger, {
    ...(options.plugins ? { plugins: options.plugins } : {}),
    ...(metrics ? { metrics } : {}),
  });
  const { limits } = gateway.settings;
  const sessions = await openSessions(
    gateway.session,
    gateway.settings.session,
    { file: instance.adminFile },
    logger,
    metrics?.collector,
  ).catch(async (error: unknown) => {
    await gateway.destroy();
    throw error;
  });
  const observer = await createObserver(
    gateway.settings,
    { file: instance.adminFile, base: instance.base },
    logger,
  ).catch(async (error: unknown) => {
    await gateway.destroy();
    await sessions.close();
    throw error;
  });
  const logLevels = options.logLevels ?? processLogLevels(logger);
  const listener = createRequestListener(gateway, logger, sessions.producer, {
    ...(observer ? { observer } : {}),
    ...(logLevels ? { logLevels } : {}),
  });
  const upgrade = upgradeListener(gateway, logger);
  const connectors = connectorsOf(gateway.settings, options);

  const servers: http.Server[] = [];
  /** Whether each server in `servers` is a TLS connector. */
  const secure: boolean[] = [];
  const active = new Set<Socket>();
  // In-flight responses are counted, not kept in one set for the server: a process-wide set that
  // every response enters and leaves kept part of every request alive into the old generation
  // (half of what was promoted: bench/README.md, "Garbage collection"), and old-space garbage is
  // what makes the latency tail. The drain finds them through their connections instead.
  let inFlight = 0;
  let received = 0;
  // The connections that have carried a request (TLS sockets, where `active` holds the TCP ones).
  // Each keeps the responses it is carrying (answering.ts): an error's answer or an upgrade waits for
  // them, so that nothing lands before or inside a response to an earlier request.
  const carrying = new Set<Socket>();
  let draining = false;
  let idle: (() => void) | undefined;
  // One listener function for every response (it reads `this`): no closure per request.
  function settled(this: http.ServerResponse): void {
    inFlight--;
    // The request keeps its socket after the response has let go of it.
    const socket = this.req.socket;
    if (!this.req.complete) ANSWERED_EARLY.set(socket, this.req);
    removeAnswering(socket, this);
    release(socket);
    if (inFlight === 0) idle?.();
  }
  /** `serve`, for each request in its turn, counted and kept by its connection until it settles. */
  const track =
    (serve: http.RequestListener): http.RequestListener =>
    (req, res) => {
      inFlight++;
      received++;
      const socket = req.socket;
      if (addAnswering(socket, res)) {
        carrying.add(socket);
        socket.once('close', () => carrying.delete(socket));
      }
      // Once stopping, an answer closes its connection, so the client's next request opens a new one
      // (refused) instead of arriving on a connection about to be destroyed.
      if (draining) res.shouldKeepAlive = false;
      // Once: a response abandoned with its connection (abandon, below) may still hear Node's own.
      res.once('close', settled);
      serveInTurn(serve, req, res, answeringCount(socket));
    };
  const request = track(listener);
  // An `Expect` other than 100-continue: without a listener for it, Node answered 417 itself, in a
  // form of its own and unseen by the count above (docs/decisions/0056-expect-continue-at-the-gateway.md).
  const expectation = track((req, res) => refuseExpectation(req, res, logger));
  try {
    for (const [index, connector] of connectors.entries()) {
      const tls = options.port === undefined ? gateway.connectorTls[index] : undefined;
      const serverOptions = httpServerOptions(limits);
      // node:https (and node:tls with it) is loaded only for a TLS connector.
      const server = tls
        ? (await import('node:https')).createServer(
            { ...serverOptions, ...handshakeOptions(serverOptions), ...tls },
            request,
          )
        : nodeHttp.createServer(serverOptions, request);
      server.maxHeadersCount = limits.maxHeadersCount;
      server.on('connection', (socket: Socket) => {
        active.add(socket);
        socket.once('close', () => active.delete(socket));
      });
      server.on('upgrade', (req, socket: Socket, head) => {
        received++;
        upgraded(socket);
        readAgain(socket, logger);
        upgradeInTurn(socket, head, (early) => void upgrade(req, socket, early));
      });
      server.on('connect', refuseConnect);
      server.on('checkExpectation', expectation);
      server.on('clientError', answerClientError);
      if (tls) {
        // node:https hands a handshake that failed or timed out to 'clientError', whose answer is an
        // HTTP status: before the handshake none can be written, and the connection was kept open
        // with it pending, for ever (a client that connected and sent nothing held its socket).
        server.removeAllListeners('tlsClientError');
        server.on('tlsClientError', closeUnsecured);
      }
      await new Promise<void>((resolve, reject) => {
        const failed = (error: unknown) => {
          // Which connector, and where its port and host were given, for the coded error.
          if (error !== null && typeof error === 'object') CONNECTOR_OF.set(error, connector);
          reject(error);
        };
        server.once('error', failed);
        server.listen(connector.port, connector.host, () => {
          server.off('error', failed);
          resolve();
        });
      });
      servers.push(server);
      secure.push(tls !== undefined);
    }
  } catch (error) {
    for (const server of servers) server.close();
    await gateway.destroy();
    await sessions.close();
    await observer?.close(logger);
    throw error;
  }

  // prom-client loads once the server listens, off the way to it.
  metrics?.collector
    .start()
    .catch((error: unknown) => logger.error('the metrics could not be started', { error: String(error) }));
  // Asked for its metrics by the primary only now that it serves.
  const cluster = metrics && options.clusterWorker ? clusterWorkerScrape(metrics.collector) : undefined;
  if (cluster && metrics) metrics.scrape = cluster.scrape;
  const urls = servers.map((server, i) => {
    const address = server.address();
    const port = typeof address === 'object' && address ? address.port : connectors[i]!.port;
    const host = connectors[i]!.host ?? 'localhost';
    return `${secure[i] ? 'https' : 'http'}://${host.includes(':') ? `[${host}]` : host}:${port}`;
  });

  const cancelCompaction = scheduleIdleCompaction({
    quietMs: 1000,
    activity: () => ({ received, inFlight }),
    logger,
  });
  let stopping: Promise<void> | undefined;
  const stop = () =>
    (stopping ??= (async () => {
      cancelCompaction();
      cluster?.close();
      draining = true;
      for (const server of servers) server.close();
      for (const server of servers) server.closeIdleConnections();
      for (const socket of carrying) {
        for (const res of answering(socket)) if (!res.headersSent) res.shouldKeepAlive = false;
      }
      if (inFlight > 0) {
        await new Promise<void>((resolve) => {
          const timer = setTimeout(resolve, limits.shutdownGracePeriod.toMillis());
          timer.unref();
          idle = () => {
            clearTimeout(timer);
            resolve();
          };
        });
      }
      for (const socket of active) socket.destroy();
      await gateway.destroy();
      await sessions.close();
      await observer?.close(logger);
    })());
  return { gateway, urls, stop };
}

/**
 * The server's metrics as admin.json `metrics` says (on by default): a collector and the scrape of
 * this process's metrics (a cluster worker's is replaced once it listens); undefined when off.
 */
async function serverMetrics(
  instance: Instance,
): Promise<{ collector: ServerMetrics; scrape(): Promise<string> } | undefined> {
  const written = (instance.admin as { metrics?: unknown } | undefined)?.metrics;
  const { value, errors } = checkConfig(metricsSchema, written, {
    ...(instance.adminFile === undefined ? {} : { file: instance.adminFile }),
    jsonPath: '$.metrics',
  });
  if (value === undefined) throw combineProblems(errors);
  if (!value.enabled) return undefined;
  const collector = new ServerMetrics({ gcDurations: value.gcDurations });
  return { collector, scrape: () => collector.text() };
}

/**
 * A connector to listen on, and where its settings come from: admin.json's `connectors[index]`, the
 * command line's `--port` and `--host`, or the default (port 8080 on every address).
 */
export interface Connector extends ConnectorSettings {
  /** Its index in admin.json's `connectors`; undefined for `--port` and the default connector. */
  index: number | undefined;
  portFrom: 'option' | 'admin' | 'default';
  /** Undefined when no host is given (every address). */
  hostFrom: 'option' | 'admin' | undefined;
}

/**
 * What to listen on: one connector on `--port` (and `--host`), else admin.json's connectors (each on
 * `--host` instead of its own host when that is given), else port 8080.
 */
export function connectorsOf(
  settings: AdminSettings,
  options: { port?: number; host?: string },
): Connector[] {
  const host = options.host ? { host: options.host, hostFrom: 'option' as const } : { hostFrom: undefined };
  if (options.port !== undefined)
    return [{ port: options.port, index: undefined, portFrom: 'option', ...host }];
  if (settings.connectors === undefined)
    return [{ port: 8080, index: undefined, portFrom: 'default', ...host }];
  return settings.connectors.map((connector, index) => ({
    ...connector,
    index,
    portFrom: 'admin',
    ...(options.host
      ? host
      : connector.host === undefined
        ? { hostFrom: undefined }
        : { hostFrom: 'admin' as const }),
  }));
}

/** The connector whose listening failed with this error. */
const CONNECTOR_OF = new WeakMap<object, Connector>();

/** The connector a failure of `startServer` came from, when it failed to listen. */
export function failedConnector(error: unknown): Connector | undefined {
  return error !== null && typeof error === 'object' ? CONNECTOR_OF.get(error) : undefined;
}

/**
 * A request answered before its body had all arrived (a route may answer without reading it), kept
 * by its connection: Node goes on reading that body, and a timeout or a malformed chunk in it is an
 * error of a request that already has its one response.
 */
const ANSWERED_EARLY = new WeakMap<Socket, http.IncomingMessage>();

/** The connections whose protocol error is being answered. */
const FAILED = new WeakSet<Socket>();

/**
 * A protocol error or a timeout on a connection (Node's 'clientError'). Whatever the connection
 * carries keeps its order (RFC 9112 §9.3.2): responses to the requests before the error go out
 * first, then the error's answer, and the connection closes. The error's answer is written only
 * where a response may still start: not after a response that closed the connection (later bytes are
 * ignored, §9.6), not inside a response that has begun, and not for a request that has had its
 * response already.
 */
function answerClientError(error: NodeJS.ErrnoException, socket: Socket): void {
  // Node goes on parsing what arrives after an error and reports it again, as it does a timeout
  // later: the first error's answer stands.
  if (FAILED.has(socket)) return;
  FAILED.add(socket);
  const early = ANSWERED_EARLY.get(socket);
  if (!socket.writable || (early !== undefined && !early.complete)) {
    socket.destroy();
    return;
  }
  // The request whose body the error cut short, if its response is still to come: the error's
  // answer takes its place, after the responses before it.
  let cut: http.ServerResponse | undefined;
  for (const res of answering(socket)) if (!res.req.complete) cut = res;
  if (cut?.headersSent) {
    // That request has its response begun (a refusal written as it arrived, a route that did not
    // wait for the body): it is finished, then the connection closes, without a second answer.
    afterAnswered(socket, () => socket.end());
    return;
  }
  const status =
    error.code === 'HPE_HEADER_OVERFLOW' ? 431 : error.code === 'ERR_HTTP_REQUEST_TIMEOUT' ? 408 : 400;
  afterAnswered(
    socket,
    () => {
      if (!socket.writable || cut?.headersSent) socket.destroy();
      else answerSocket(socket, status, nodeHttp.STATUS_CODES[status]!);
    },
    cut,
  );
}

/** A TLS connection whose handshake failed or timed out: there is no HTTP to answer in. */
function closeUnsecured(_error: Error, socket: Socket): void {
  socket.destroy();
}

/**
 * A CONNECT request (a client taking the gateway for a forward proxy): Node hands it over like an
 * upgrade and, with nobody listening, closes the connection without a word. It gets 501 after the
 * responses before it, and the connection closes; nothing is tunnelled.
 */
function refuseConnect(_req: http.IncomingMessage, socket: Socket): void {
  afterAnswered(socket, () => {
    if (socket.writable) answerSocket(socket, 501, 'Not Implemented');
    else socket.destroy();
  });
}

/**
 * Node hands over an Upgrade request as soon as it has parsed it, while responses to the requests
 * pipelined before it may still be pending or streaming: its answer (a 101 and the tunnel) waits
 * until they have gone out. After a response that closed the connection it is not served at all.
 */
function upgradeInTurn(socket: Socket, head: Buffer, serve: (head: Buffer) => void): void {
  if (answeringCount(socket) === 0) {
    serve(head);
    return;
  }
  // Node has taken its own listeners off the socket: errors while waiting must not go unheard, and
  // the response still being written needs the socket's 'drain' relayed, as Node did.
  socket.on('error', () => socket.destroy());
  const drain = () => {
    for (const res of answering(socket)) if (res.socket === socket) res.emit('drain');
  };
  socket.on('drain', drain);
  // Read while waiting, or a client that leaves is never seen (its end waits behind unread bytes):
  // what it sends for the tunnel is kept (up to EARLY_TUNNEL_BYTES, then reading pauses) and goes
  // first into it; a client that stops sending before its turn has given the upgrade up.
  const early = [head];
  let earlyBytes = head.length;
  const keep = (chunk: Buffer) => {
    early.push(chunk);
    earlyBytes += chunk.length;
    if (earlyBytes >= EARLY_TUNNEL_BYTES) socket.pause();
  };
  const gaveUp = () => socket.destroy();
  socket.on('data', keep);
  socket.once('end', gaveUp);
  afterAnswered(socket, () => {
    socket.off('drain', drain);
    socket.off('data', keep);
    socket.off('end', gaveUp);
    if (!socket.writable) {
      // The client left first. Node took its listeners off the socket with the upgrade, so the
      // responses still waiting would never hear it close: their exchanges (and upstream requests)
      // would run on, and a shutdown wait for them.
      for (const res of [...answering(socket)]) abandon(res);
      socket.destroy();
      return;
    }
    // As Node hands an upgrade's socket over: neither flowing nor paused, for the tunnel to read.
    socket.pause();
    (socket as unknown as { readableFlowing: boolean | null }).readableFlowing = null;
    // The keep-alive timer Node set when the last response finished is not the tunnel's.
    socket.setTimeout(0);
    serve(early.length === 1 ? head : Buffer.concat(early));
  });
}

/** Bytes a waiting upgrade's client may send ahead of its 101 before reading pauses. */
const EARLY_TUNNEL_BYTES = 64 * 1024;

/** Ends a response whose connection has gone, as Node would have: its exchange hears 'close'. */
function abandon(res: http.ServerResponse): void {
  if (res.writableFinished) return;
  res.destroy();
  res.emit('close');
}

/** The options of each connector's node:http (or node:https) server, from admin.json's limits. */
export function httpServerOptions(limits: AdminSettings['limits']): http.ServerOptions {
  const requestTimeout = limits.requestTimeout.toMillis();
  // The whole request's bound bounds its head too; Node refuses to start (a RangeError) when the
  // head is given longer, as admin.json's default 30 seconds is beside a requestTimeout of 20.
  const bounded = requestTimeout > 0 && Number.isFinite(requestTimeout);
  const headersTimeout = bounded
    ? Math.min(limits.headersTimeout.toMillis(), requestTimeout)
    : limits.headersTimeout.toMillis();
  return {
    maxHeaderSize: limits.maxHeaderSize,
    requestTimeout,
    headersTimeout,
    keepAliveTimeout: limits.keepAliveTimeout.toMillis(),
    // Node checks the two timeouts above only this often (30 seconds by default).
    connectionsCheckingInterval: checkingInterval(limits.headersTimeout, limits.requestTimeout),
    requireHostHeader: false,
    // A request without Content-Length or Transfer-Encoding has no body (RFC 9112 §6.3): Node then
    // hands it over already ended, without the stream's end, destroy and close steps it would
    // otherwise run for nothing (Node 24.12 and later; earlier ones ignore the option).
    optimizeEmptyRequests: true,
  };
}

/**
 * A TLS connector's bound on its handshake: the head's (`headersTimeout`, within `requestTimeout`),
 * which Node applies only once the handshake is done and the HTTP parser has the connection. Node's
 * own bound, `handshakeTimeout`, is 120 seconds: a client that connected and sent nothing, or part of
 * a ClientHello, held its socket four times as long as on a plain HTTP connector. Unbounded heads
 * keep Node's default.
 */
export function handshakeOptions(options: http.ServerOptions): { handshakeTimeout?: number } {
  const ms = options.headersTimeout;
  return ms !== undefined && ms > 0 && Number.isFinite(ms) ? { handshakeTimeout: ms } : {};
}

/** How often to look for connections past headersTimeout or requestTimeout (1/10 of the shorter). */
function checkingInterval(...timeouts: Duration[]): number {
  const set = timeouts.map((t) => t.toMillis()).filter((ms) => ms > 0 && Number.isFinite(ms));
  return set.length === 0 ? 1000 : Math.min(1000, Math.max(50, Math.round(Math.min(...set) / 10)));
}
