import type http from 'node:http';
import type { Socket } from 'node:net';

/**
 * The responses a connection is carrying: usually one, more when the client pipelines. The one is
 * kept in a slot and only overlapping ones go into a Set made for them. A Set per connection that
 * every response entered and left was rebuilt by V8 every few requests (deleted entries fill its
 * table until it rehashes), garbage on every request (bench/README.md, "Garbage collection"). The
 * slots are kept beside the socket, not on it, so that sockets keep the shape Node gave them (a
 * socket that has carried a request would otherwise differ from a new one, and Node's socket code be
 * compiled again for each).
 */
interface Carried {
  first: http.ServerResponse | undefined;
  more: Set<http.ServerResponse> | undefined;
}

const CARRIED = new WeakMap<Socket, Carried>();

/** Records `res` as carried by `socket`; true the first time this socket carries any response. */
export function addAnswering(socket: Socket, res: http.ServerResponse): boolean {
  const carried = CARRIED.get(socket);
  if (carried === undefined) {
    CARRIED.set(socket, { first: res, more: undefined });
    return true;
  }
  if (carried.first === undefined) carried.first = res;
  else (carried.more ??= new Set()).add(res);
  return false;
}

/** How many responses `socket` is carrying now. */
export function answeringCount(socket: Socket): number {
  const carried = CARRIED.get(socket);
  if (carried === undefined) return 0;
  return (carried.first === undefined ? 0 : 1) + (carried.more?.size ?? 0);
}

/** Forgets `res` once it has finished or been abandoned. */
export function removeAnswering(socket: Socket, res: http.ServerResponse): void {
  const carried = CARRIED.get(socket);
  if (carried === undefined) return;
  if (carried.first === res) carried.first = undefined;
  else carried.more?.delete(res);
}

/** Every response `socket` is carrying now. */
export function* answering(socket: Socket): Generator<http.ServerResponse> {
  const carried = CARRIED.get(socket);
  if (carried?.first !== undefined) yield carried.first;
  if (carried?.more !== undefined) yield* carried.more;
}

/**
 * Calls `then` once every response `socket` is carrying now, `but` aside, has finished or been
 * abandoned (by then Node has handed the connection to the next response, or ended it after one
 * that closes it), or once the connection has closed. What is written to the socket then comes
 * after those responses, as the requests came (RFC 9112 §9.3.2).
 */
export function afterAnswered(socket: Socket, then: () => void, but?: http.ServerResponse): void {
  let waiting = 0;
  let called = false;
  const once = () => {
    if (called) return;
    called = true;
    socket.off('close', once);
    then();
  };
  const settled = () => {
    if (--waiting === 0) once();
  };
  for (const res of answering(socket)) {
    if (res === but) continue;
    waiting++;
    res.once('close', settled);
  }
  if (waiting === 0) once();
  else socket.once('close', once);
}
