import type { Duplex } from 'node:stream';
import type { Dispatcher } from 'undici';
import type { Context, UpgradeContext } from '../../context/context.ts';
import { responseHead } from '../../http/header-validation.ts';
import { type Request, Response } from '../../http/message.ts';
import { nodeHttp } from '../../http/node-http.ts';
import { answerSocket, ownResponse } from '../../http/own-answer.ts';
import { ClientHandler, type ClientHandlerOptions } from './client-handler.ts';
import { isUpstreamError, type UpstreamError } from './errors.ts';
import { responseHeadersFrom, undiciHeaders, upstreamRequestHeaders } from './headers.ts';
import { countInterim, rawStrings, relayedReason, unrelayableHead } from './upstream-exchange.ts';

export interface ReverseProxyHandlerOptions extends ClientHandlerOptions {
  /** Proxy WebSocket upgrades (`upgrade()`); true unless said otherwise. */
  websocket?: boolean;
}

/** Something the server can hand an `Upgrade` request and its socket to. */
export interface UpgradeHandler {
  /**
   * Takes over `clientSocket` for an upgrade request: answers it (101 and a tunnel, the upstream's
   * refusal, or a 5xx) and resolves with the status answered once that is written.
   */
  upgrade(context: Context, request: Request, clientSocket: Duplex, head: Buffer): Promise<number>;
}

export function isUpgradeHandler(value: unknown): value is UpgradeHandler {
  return typeof (value as UpgradeHandler | null)?.upgrade === 'function';
}

/** How much of a refused upgrade's body is relayed to the client; the rest is cut. */
const MAX_REFUSAL_BODY = 64 * 1024;

/**
 * The handler for the final upstream of a route: a ClientHandler that answers `502 Bad Gateway`
 * when the upstream cannot be reached and `504 Gateway Timeout` when it does not answer in time,
 * instead of failing, and that proxies WebSocket upgrades. X-Forwarded-* are sent by default.
 */
export class ReverseProxyHandler extends ClientHandler implements UpgradeHandler {
  readonly websocket: boolean;

  constructor(options: ReverseProxyHandlerOptions = {}) {
    super({ ...options, forwardedHeaders: options.forwardedHeaders ?? true });
    this.websocket = options.websocket ?? true;
  }

  override handle(context: Context, request: Request): Promise<Response> {
    const upgrade = context.get<UpgradeContext>('upgrade');
    if (upgrade && !upgrade.claimed && request.headers.has('upgrade')) {
      upgrade.claimed = true;
      // The exchange already happened on the socket; this response only reports it.
      return this.upgrade(context, request, upgrade.socket, upgrade.head).then(
        (status) => new Response({ status }),
      );
    }
    return super.handle(context, request);
  }

  /** An upstream that fails is answered 502, one that does not answer in time 504; anything else is thrown on. */
  protected override answerFailure(error: unknown, context: Context): Response {
    if (!isUpstreamError(error)) throw error;
    // A client that went away is routine; an upstream that fails is worth a warning.
    const log = error.failure === 'aborted' ? this.logger.debug : this.logger.warn;
    const what = error.failure === 'request' ? 'the request was not sent upstream' : 'the upstream failed';
    log.call(this.logger, what, {
      transactionId: context.transactionId,
      error: error.message,
    });
    return failureResponse(error);
  }

  /**
   * Opens the upgrade with the upstream and, once it answers 101, relays its answer to the client
   * and joins the two sockets, each closing when the other does. A refusal by the upstream (any
   * other status) is relayed as it is; a connection failure or timeout answers 502 or 504. The
   * client socket is always answered and closed on failure, never left open.
   */
  async upgrade(context: Context, request: Request, clientSocket: Duplex, head: Buffer): Promise<number> {
    // From here on, any socket error (the client going away) is handled by closing both sides.
    clientSocket.on('error', () => clientSocket.destroy());
    if (!this.websocket) return answer(clientSocket, 501, 'WebSocket proxying is disabled');
    const abort = new AbortController();
    const onClientClose = () => abort.abort(new Error('the client closed the connection'));
    clientSocket.once('close', onClientClose);
    const onContextAbort = () => abort.abort(context.signal.reason);
    context.signal.addEventListener('abort', onContextAbort, { once: true });
    let origin = '';
    try {
      const target = this.upstreamTarget(request, context);
      origin = target.origin;
      const headers = upstreamRequestHeaders(request, {
        host: target.host,
        forwarded: this.forwarded(context, request),
        extra: this.additionalHeaders(context, request),
      });
      const outcome = await dispatchUpgrade(this.dispatcher, {
        origin: target.origin,
        path: target.path,
        method: request.method,
        headers: undiciHeaders(headers),
        upgrade: request.headers.get('upgrade') ?? 'websocket',
        headersTimeout: this.soTimeoutMs,
        // A refusal's body too: the pool has no body timeout of its own (the IdleWatch bounds plain
        // requests), and a refusal whose body stalled held the client and an upstream connection
        // for ever (a client that leaves only half-closes the socket, which the wait never sees).
        bodyTimeout: this.soTimeoutMs,
        signal: abort.signal,
      });
      if (outcome.kind === 'refused') {
        const { statusCode, reason, rawHeaders, body } = outcome;
        const relayed = responseHeadersFrom(rawHeaders);
        // A 204 or 304 has no body; a 304 keeps the upstream's Content-Length (what a GET would
        // return), a 204 never has one (RFC 9110 §8.6).
        const bodiless = statusCode === 204 || statusCode === 304;
        if (statusCode !== 304) relayed.delete('content-length');
        const framing = bodiless ? [] : ['Content-Length', String(body.length)];
        // A phrase left out (one undici could not read as it came) is the status's standard one.
        const phrase = reason || nodeHttp.STATUS_CODES[statusCode] || '';
        writeHead(clientSocket, statusCode, phrase, [...relayed.toRaw(), ...framing, 'Connection', 'close']);
        clientSocket.end(bodiless ? undefined : body);
        return statusCode;
      }
      const { socket, rawHeaders, reason } = outcome;
      if (clientSocket.destroyed) {
        socket.destroy();
        return 101;
      }
      const switched = responseHeadersFrom(rawHeaders, { keepUpgrade: true });
      // Never on a 1xx (RFC 9110 §8.6); what follows is the tunnel, not a body.
      switched.delete('content-length');
      writeHead(clientSocket, 101, reason || 'Switching Protocols', switched.toRaw());
      if (head.length > 0) socket.write(head);
      join(clientSocket, socket);
      return 101;
    } catch (error) {
      if (clientSocket.destroyed) return 502;
      const failure = this.failure(error, origin || request.uri.toString(), context);
      this.logger.warn('the upstream upgrade failed', {
        transactionId: context.transactionId,
        error: failure.message,
      });
      return answer(clientSocket, failure.upstreamStatus);
    } finally {
      clientSocket.off('close', onClientClose);
      context.signal.removeEventListener('abort', onContextAbort);
    }
  }
}

/** The answer a reverse proxy gives for an unreachable or silent upstream. */
export function failureResponse(error: UpstreamError): Response {
  const response = ownResponse(error.upstreamStatus, nodeHttp.STATUS_CODES[error.upstreamStatus]!);
  response.cause = error;
  return response;
}

type UpgradeOutcome =
  | { kind: 'upgraded'; socket: Duplex; rawHeaders: string[]; reason: string }
  | { kind: 'refused'; statusCode: number; reason: string; rawHeaders: string[]; body: Buffer };

/**
 * undici's `upgrade()` throws away a non-101 answer; a dispatch handler keeps it, so the client
 * learns why the upstream refused (401, 403, 404...) instead of getting a bare 502.
 */
function dispatchUpgrade(
  dispatcher: Dispatcher,
  options: Dispatcher.DispatchOptions & { signal: AbortSignal },
): Promise<UpgradeOutcome> {
  const { signal, ...dispatch } = options;
  return new Promise((resolve, reject) => {
    let controller: Dispatcher.DispatchController | undefined;
    let refusal:
      | { statusCode: number; reason: string; rawHeaders: string[]; chunks: Buffer[]; size: number }
      | undefined;
    let interim = 0;
    const onAbort = () => controller?.abort(signal.reason as Error);
    const settle = () => signal.removeEventListener('abort', onAbort);
    if (signal.aborted) {
      reject(signal.reason);
      return;
    }
    signal.addEventListener('abort', onAbort, { once: true });
    const relayRefusal = () => {
      settle();
      if (!refusal) {
        reject(new Error('the upstream ended the upgrade without an answer'));
        return;
      }
      const body = Buffer.concat(refusal.chunks).subarray(0, MAX_REFUSAL_BODY);
      resolve({
        kind: 'refused',
        statusCode: refusal.statusCode,
        reason: refusal.reason,
        rawHeaders: refusal.rawHeaders,
        body,
      });
    };
    const handler: Dispatcher.DispatchHandler = {
      onRequestStart(ctrl) {
        controller = ctrl;
        if (signal.aborted) ctrl.abort(signal.reason as Error);
      },
      onRequestUpgrade(ctrl, _statusCode, _headers, socket) {
        settle();
        resolve({
          kind: 'upgraded',
          socket,
          rawHeaders: rawStrings(ctrl.rawHeaders),
          reason: 'Switching Protocols',
        });
      },
      onResponseStart(ctrl, statusCode, headers, statusMessage) {
        // Interim answers (103 Early Hints ...) are not the refusal; 101 goes to onRequestUpgrade.
        if (statusCode < 200 && statusCode >= 100) {
          interim = countInterim(interim, ctrl);
          return;
        }
        // A refusal is relayed as a plain response is: one that cannot be is the upstream's 502.
        const reason = relayedReason(statusMessage);
        const invalid = unrelayableHead(statusCode, headers, reason);
        if (invalid !== undefined) {
          ctrl.abort(invalid);
          return;
        }
        refusal = {
          statusCode,
          reason: reason!,
          rawHeaders: rawStrings(ctrl.rawHeaders),
          chunks: [],
          size: 0,
        };
      },
      onResponseData(ctrl, chunk) {
        if (!refusal || refusal.size >= MAX_REFUSAL_BODY) return;
        refusal.chunks.push(chunk);
        refusal.size += chunk.length;
        // Past what is relayed, the rest is not read: an endless body kept a core busy for ever.
        if (refusal.size >= MAX_REFUSAL_BODY) {
          relayRefusal();
          ctrl.abort(new Error('the refusal of the upgrade is longer than is relayed'));
        }
      },
      onResponseEnd: relayRefusal,
      onResponseError(_ctrl, error) {
        settle();
        reject(error);
      },
    };
    try {
      dispatcher.dispatch(dispatch, handler);
    } catch (error) {
      settle();
      reject(error);
    }
  });
}

/** Writes a checked head (an invalid field throws before a byte is written). */
function writeHead(socket: Duplex, status: number, reason: string, raw: readonly string[]): void {
  socket.write(responseHead(status, reason, raw), 'latin1');
}

/** The gateway's own answer, written to the client's socket, which is then closed. */
function answer(socket: Duplex, status: number, body?: string): number {
  answerSocket(socket, status, nodeHttp.STATUS_CODES[status]!, body);
  return status;
}

/**
 * Joins two sockets both ways. An end on one side is passed on as an end (a WebSocket's closing
 * handshake finishes), then that side is closed once its last bytes are written; an error or an
 * abrupt close on either side closes both at once.
 */
function join(a: Duplex, b: Duplex): void {
  const link = (from: Duplex, to: Duplex) => {
    from.on('error', () => {
      from.destroy();
      to.destroy();
    });
    from.on('close', () => {
      if (to.destroyed) return;
      if (!from.readableEnded) {
        to.destroy();
      } else if (to.writableFinished) {
        to.destroy();
      } else {
        to.once('finish', () => to.destroy());
        if (!to.writableEnded) to.end();
      }
    });
    from.pipe(to);
  };
  link(a, b);
  link(b, a);
}
