import type { Socket } from 'node:net';
import type { Logger } from '@portico/gateway-core';

/** What readAgain uses of a socket's handle: Node internals (net.js), so looked for before use. */
interface StartableHandle {
  reading: boolean;
  readStart(): number;
}

function isStartable(handle: unknown): handle is StartableHandle {
  return (
    typeof handle === 'object' &&
    handle !== null &&
    typeof (handle as StartableHandle).reading === 'boolean' &&
    typeof (handle as StartableHandle).readStart === 'function'
  );
}

/** The loggers already told that this Node lacks those internals: once each is enough. */
const TOLD = new WeakSet<Logger>();

/**
 * Makes sure a connection Node has handed over with an Upgrade is read again. Node's parser reads
 * the connection straight from its handle, not through the socket's stream, and while the socket is
 * paused (a pipelined request held back, or Node's own back-pressure on responses waiting to be
 * sent) a 'pause' listener of Node's keeps the handle stopped. The upgrade takes that listener off
 * with the parser, and the stream, which never saw the parser's reads, still counts one of its own
 * under way: resuming it reads nothing, so the tunnel never heard its client again past the bytes
 * that came with the request (measured: a frame sent after ten pipelined requests stayed unread in
 * the kernel). The handle is started again as Node's own 'resume' listener would; what it reads waits
 * in the stream (which stops the handle again once it holds its high-water mark) for whoever reads.
 *
 * `handle` is the socket's own unless given (a test gives one without those internals). A Node
 * whose handle lacks them gets the stream's way instead (`readThroughStream`), logged once at debug.
 */
export function readAgain(
  socket: Socket,
  logger: Logger,
  handle: unknown = (socket as unknown as { _handle?: unknown })._handle,
): void {
  // No handle: the connection is closed already, and there is nothing to read.
  if (handle === null || socket.destroyed) return;
  if (isStartable(handle)) {
    if (handle.reading) return;
    handle.reading = true;
    if (handle.readStart() !== 0) socket.destroy();
    return;
  }
  if (!TOLD.has(logger)) {
    TOLD.add(logger);
    logger.debug(
      "sockets here lack Node's handle internals: an upgraded connection is read again through its stream",
    );
  }
  readThroughStream(socket);
}

/**
 * The same through the stream's own contract only: an empty chunk ends the read the stream counts
 * under way (it pushes nothing and errs on nothing, even after the end), so the stream asks the
 * socket to read again, and the socket starts its handle if it is stopped. Costs a read request
 * when the handle was reading anyway.
 */
function readThroughStream(socket: Socket): void {
  socket.push(Buffer.alloc(0));
}
