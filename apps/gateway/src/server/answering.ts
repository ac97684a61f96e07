import type http from 'node:http';
import type { Socket } from 'node:net';

/**
 * The responses a connection is carrying: usually one, more when the client pipelines. The one is
 * kept in a slot on the socket and only overlapping ones go into a Set made for them. A Set per
 * connection that every response entered and left was rebuilt by V8 every few requests (deleted
 * entries fill its table until it rehashes): about 370 B per proxied request (bench/README.md).
 */
const FIRST = Symbol('portico.answering');
const MORE = Symbol('portico.answeringMore');

type AnsweringSocket = Socket & {
  [FIRST]?: http.ServerResponse | undefined;
  [MORE]?: Set<http.ServerResponse>;
};

/** Records `res` as carried by `socket`; true the first time this socket carries any response. */
export function addAnswering(socket: Socket, res: http.ServerResponse): boolean {
  const s = socket as AnsweringSocket;
  const firstTime = !(FIRST in s);
  if (s[FIRST] === undefined) s[FIRST] = res;
  else (s[MORE] ??= new Set()).add(res);
  return firstTime;
}

/** Forgets `res` once it has finished or been abandoned. */
export function removeAnswering(socket: Socket, res: http.ServerResponse): void {
  const s = socket as AnsweringSocket;
  if (s[FIRST] === res) s[FIRST] = undefined;
  else s[MORE]?.delete(res);
}

/** Every response `socket` is carrying now. */
export function* answering(socket: Socket): Generator<http.ServerResponse> {
  const s = socket as AnsweringSocket;
  if (s[FIRST] !== undefined) yield s[FIRST];
  if (s[MORE] !== undefined) yield* s[MORE];
}

/** True when a response on `socket` has begun, so nothing else may be written to it. */
export function isResponding(socket: Socket): boolean {
  for (const res of answering(socket)) if (res.headersSent) return true;
  return false;
}
