import type http from 'node:http';
import type { Socket } from 'node:net';

/**
 * Pipelined requests. Node parses every request a client pipelines and hands each over at once (it
 * stops reading only while responses wait to be sent), so one connection could have thousands served
 * together: every upstream connection of its route taken, other clients waiting behind them, the
 * process's memory grown by all of them (docs/departures.md, "Limits a client cannot grow past").
 * So a connection has at most
 * MAX_IN_FLIGHT_PER_CONNECTION requests served at once; later ones wait their turn, and the
 * connection is not read meanwhile (nginx and HAProxy serve pipelined requests one after the other).
 * Node still parses whatever one read brought: a connection with more than MAX_HELD_PER_CONNECTION
 * requests waiting is closed, as no client that means well pipelines that many.
 */
export const MAX_IN_FLIGHT_PER_CONNECTION = 8;
export const MAX_HELD_PER_CONNECTION = 64;

/** The requests each connection holds back, in the order they came. */
const HELD = new WeakMap<Socket, (() => void)[]>();

/**
 * Serves a request now unless its connection already has its share in flight (`inFlight`, this one
 * included), else once the earlier ones have ended.
 */
export function serveInTurn(
  listener: http.RequestListener,
  req: http.IncomingMessage,
  res: http.ServerResponse,
  inFlight: number,
): void {
  if (inFlight <= MAX_IN_FLIGHT_PER_CONNECTION) {
    listener(req, res);
    return;
  }
  const socket = req.socket;
  // A held request whose client has gone by its turn is not served: its response has closed.
  hold(socket, () => (res.destroyed ? release(socket) : listener(req, res)));
}

/** Holds back `serve` until `release(socket)` lets it go; the connection is not read meanwhile. */
function hold(socket: Socket, serve: () => void): void {
  let held = HELD.get(socket);
  if (held === undefined) {
    held = [];
    HELD.set(socket, held);
  }
  if (held.length >= MAX_HELD_PER_CONNECTION) {
    HELD.delete(socket);
    socket.destroy();
    return;
  }
  held.push(serve);
  socket.pause();
}

/**
 * A request of the connection ended: the next one held back is served; once none is, the
 * connection is read again (if Node has paused it too, for responses waiting to be sent, Node keeps
 * it paused), unless an Upgrade has taken it over meanwhile: what reads it then is the upgrade's.
 */
export function release(socket: Socket): void {
  const held = HELD.get(socket);
  if (held === undefined) return;
  const serve = held.shift();
  if (held.length === 0) {
    HELD.delete(socket);
    if (!socket.destroyed && !UPGRADED.has(socket)) socket.resume();
  }
  serve?.();
}

/** The connections an Upgrade has taken over (Node has handed them over with their parser gone). */
const UPGRADED = new WeakSet<Socket>();

/**
 * Node has handed `socket` over with an Upgrade: the end of the requests held back before it no
 * longer resumes reading it (a waiting upgrade pauses it once it has kept what it may, and that
 * pause would be undone).
 */
export function upgraded(socket: Socket): void {
  UPGRADED.add(socket);
}
