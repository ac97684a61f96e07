import type { IncomingMessage, ServerResponse } from 'node:http';
import type { TLSSocket } from 'node:tls';
import {
  Context,
  commitSession,
  Entity,
  ErrorCode,
  type Handler,
  Headers,
  isPorticoError,
  type Logger,
  Request,
  Response,
  type SessionProducer,
  Uri,
} from '@portico/gateway-core';

/**
 * The one place where Node's HTTP objects meet the core model: an incoming message becomes a
 * Request (its body left streaming), the handler's Response is written straight to the socket.
 * Writing to the raw response (not through Koa's body handling) was about twice as fast in a
 * measurement and lets us handle aborted streams ourselves.
 */
export interface ExchangeOptions {
  handler: Handler;
  logger: Logger;
  /**
   * Where each request's session comes from: the server-side sessions, or the configuration's
   * session producer (a heap object named `Session`, or config.json's `session`).
   */
  sessions?: SessionProducer;
  /** The bound on a body a filter reads whole (admin.json `limits.maxBufferedBodySize`). */
  maxBufferedBodySize?: number;
}

export async function handleExchange(
  req: IncomingMessage,
  res: ServerResponse,
  options: ExchangeOptions,
): Promise<void> {
  const abort = new AbortController();
  const onClose = () => {
    if (!res.writableFinished) abort.abort(new Error('the client closed the connection'));
  };
  res.once('close', onClose);
  let request: Request;
  try {
    request = toRequest(req, { maxBytes: options.maxBufferedBodySize, arrival: true });
  } catch {
    // Node's parser accepts a few request targets a URI cannot hold.
    req.resume();
    await writeResponse(res, plain(400, 'Bad Request'), req.method ?? 'GET', options.logger);
    return;
  }
  const session = options.sessions ? await options.sessions.open(request) : undefined;
  const context = new Context({
    client: clientOf(req),
    signal: abort.signal,
    ...(session ? { session: () => session.data() } : {}),
  });
  let response: Response;
  try {
    response = await options.handler.handle(context, request);
  } catch (error) {
    // The rest of a refused body is not worth reading: answer, then close the connection.
    if (isPorticoError(error, ErrorCode.ENTITY_TOO_LARGE)) res.shouldKeepAlive = false;
    response = errorResponse(error, context, options.logger);
  }
  // An unread request body is drained so the connection can serve the next request.
  if (!request.entity.isBuffered && !req.readableEnded) req.resume();
  // A session that cannot be saved turns the answer into a 500 (logged) rather than vanish.
  if (session) response = await commitSession(session, response, options.logger, context.transactionId);
  await writeResponse(res, response, request.method, options.logger);
  // Spill files of bodies kept for replay are removed once the exchange is over.
  void request.entity.dispose();
  void response.entity.dispose();
}

/**
 * Headers that describe the client's connection to the gateway, not the request: removed on arrival
 * (with every header `Connection` lists), so that no filter mistakes them for the request's own and
 * a client cannot name a header a filter adds (`Connection: Authorization`) to have it stripped later.
 */
const ARRIVAL_HOP_BY_HOP = [
  'connection',
  'keep-alive',
  'proxy-connection',
  'te',
  'trailer',
  'transfer-encoding',
  'upgrade',
];

/**
 * Builds a core Request; the URI is absolute, from the Host header and the connection's scheme.
 * `arrival` removes the connection's own headers (not for upgrades, which need them).
 */
export function toRequest(
  req: IncomingMessage,
  options: { maxBytes?: number | undefined; arrival?: boolean } = {},
): Request {
  const secure = (req.socket as TLSSocket).encrypted === true;
  const host = req.headers.host ?? `${req.socket.localAddress}:${req.socket.localPort}`;
  const target = req.url ?? '/';
  const uri = target.startsWith('/')
    ? Uri.parse(`${secure ? 'https' : 'http'}://${host}${target}`)
    : Uri.parse(target);
  const length = req.headers['content-length'];
  const hasBody = length !== undefined ? length !== '0' : req.headers['transfer-encoding'] !== undefined;
  const headers = Headers.fromRaw(req.rawHeaders);
  if (options.arrival) {
    for (const listed of headers.getAll('connection').flatMap((v) => v.split(',')))
      headers.delete(listed.trim());
    for (const name of ARRIVAL_HOP_BY_HOP) headers.delete(name);
  }
  const declared = length === undefined ? undefined : Number(length);
  return new Request({
    method: req.method ?? 'GET',
    uri,
    version: `HTTP/${req.httpVersion}`,
    headers,
    entity: hasBody
      ? new Entity(req, declared, options.maxBytes === undefined ? {} : { maxBytes: options.maxBytes })
      : null,
  });
}

function clientOf(req: IncomingMessage) {
  const socket = req.socket as TLSSocket;
  const certificate = socket.encrypted ? socket.getPeerCertificate?.(false) : undefined;
  return {
    remoteAddress: socket.remoteAddress ?? '',
    remotePort: socket.remotePort ?? 0,
    localAddress: socket.localAddress ?? '',
    localPort: socket.localPort ?? 0,
    isSecure: socket.encrypted === true,
    certificates: certificate?.raw ? [certificate.raw] : [],
    userAgent: req.headers['user-agent'] ?? null,
  };
}

/** What a failure that escaped every filter looks like to the client. */
function errorResponse(error: unknown, context: Context, logger: Logger): Response {
  if (isPorticoError(error, ErrorCode.ENTITY_TOO_LARGE)) return plain(413, 'Payload Too Large');
  if (isPorticoError(error, ErrorCode.UPSTREAM)) {
    const status = (error as { upstreamStatus?: number }).upstreamStatus ?? 502;
    logger.warn('upstream failure', { transactionId: context.transactionId, error: error.message });
    return plain(status, status === 504 ? 'Gateway Timeout' : 'Bad Gateway');
  }
  logger.error('request failed', {
    transactionId: context.transactionId,
    error: error instanceof Error ? (error.stack ?? error.message) : String(error),
  });
  return plain(500, 'Internal Server Error');
}

const plain = (status: number, text: string): Response => Response.text(status, text);

/** Headers that describe one connection and must not be copied from a response object to ours. */
const HOP_BY_HOP = new Set([
  'connection',
  'keep-alive',
  'transfer-encoding',
  'upgrade',
  'proxy-connection',
  'te',
  'trailer',
]);

/** Writes a Response to the client, streaming its body, and never throws. */
export function writeResponse(
  res: ServerResponse,
  response: Response,
  method: string,
  logger: Logger,
): Promise<void> {
  return new Promise((resolve) => {
    if (res.headersSent || res.destroyed) {
      response.entity.discard();
      resolve();
      return;
    }
    const raw: string[] = [];
    for (const [name, values] of response.headers) {
      if (HOP_BY_HOP.has(name.toLowerCase())) continue;
      for (const value of values) raw.push(name, value);
    }
    const noBody =
      method === 'HEAD' || response.status === 204 || response.status === 304 || response.status < 200;
    try {
      res.writeHead(response.status, response.reason, raw);
    } catch (error) {
      logger.error('invalid response headers', { error: String(error) });
      res.destroy();
      resolve();
      return;
    }
    const body = noBody ? null : response.entity.stream();
    if (noBody) response.entity.discard();
    if (!body) {
      res.end(resolve);
      return;
    }
    const finish = () => {
      res.off('close', finish);
      resolve();
    };
    res.once('close', finish);
    body.once('error', (error) => {
      // The upstream went away mid-body: the client cannot be told with a status any more.
      logger.warn('response body failed while streaming', { error: String(error) });
      res.destroy();
    });
    res.once('close', () => {
      if (!res.writableFinished) body.destroy();
    });
    body.pipe(res);
  });
}
