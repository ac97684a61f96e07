import type { Duplex } from 'node:stream';
import { FieldNameSet } from './field-names.ts';
import { responseHead } from './header-validation.ts';
import { forEachFieldOf, type Headers } from './headers.ts';
import { Response } from './message.ts';

/**
 * The one form of every answer the gateway gives itself (a refusal on arrival, a failure of the
 * exchange, of an upstream or of an upgrade): the status, its reason phrase, and a short
 * `text/plain` body, the reason phrase again unless said otherwise, with no line break after it. An
 * empty body is only `Content-Length: 0`. Here, below the handlers and the runtime, because both
 * answer this way and handlers cannot import the runtime (which imports them).
 */
export function ownResponse(status: number, reason: string, body: string = reason): Response {
  const response = body === '' ? Response.empty(status) : Response.text(status, body);
  response.reason = reason;
  return response;
}

/** What `endSocketWith` writes itself: the answer closes the connection and states its length. */
const WRITTEN_BY_THE_ANSWER = new FieldNameSet(['connection', 'content-length', 'transfer-encoding']);

/**
 * Writes an answer whose body is in hand straight to a socket Node has handed over (an upgrade's,
 * where no ServerResponse writes), and closes the connection: the head (`headers`, then the body's
 * length and `Connection: close`) and the body in one write. Throws, before writing anything, for a
 * field or reason phrase that cannot be written.
 */
export function endSocketWith(
  socket: Duplex,
  status: number,
  reason: string,
  headers: Headers,
  body: Buffer,
): void {
  const fields: string[] = [];
  forEachFieldOf(headers, (name, value) => {
    if (!WRITTEN_BY_THE_ANSWER.has(name)) fields.push(name, value);
  });
  fields.push('Content-Length', String(body.length), 'Connection', 'close');
  socket.end(Buffer.concat([Buffer.from(responseHead(status, reason, fields), 'latin1'), body]));
}

/** The gateway's own answer (`ownResponse`) written straight to a socket, which is then closed. */
export function answerSocket(socket: Duplex, status: number, reason: string, body: string = reason): void {
  endSocketWith(socket, status, reason, ownResponse(status, reason, body).headers, Buffer.from(body));
}
