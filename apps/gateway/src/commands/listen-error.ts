import { ErrorCode, PorticoError } from '@portico/gateway-core';
import type { Instance } from '../server/instance.ts';

/** Why a socket cannot listen, by the system's error code. */
const REASONS: Record<string, string> = {
  EADDRINUSE: 'is already in use',
  EACCES: 'is not allowed for this user (ports below 1024 need privileges)',
  EADDRNOTAVAIL: 'is on an address this machine does not have',
};

/**
 * The coded error for a connector that cannot listen (a port in use, a privileged port, a host that
 * is not this machine's), naming the port and how to change it: `--port` when the command line chose
 * it, else the admin.json connector it comes from. Undefined for any other error.
 */
export function listenError(
  error: unknown,
  where: { instance: Instance; portOption: boolean },
): PorticoError | undefined {
  const failure = error as (NodeJS.ErrnoException & { port?: number; address?: string | null }) | undefined;
  const reason = failure?.code === undefined ? undefined : REASONS[failure.code];
  if (reason === undefined || (failure?.syscall !== 'listen' && failure?.syscall !== 'bind'))
    return undefined;
  const port = failure.port;
  const address = failure.address ? ` (address ${failure.address})` : '';
  const message = `cannot listen: port ${port ?? '?'}${address} ${reason}`;
  if (where.portOption) {
    return new PorticoError(ErrorCode.LISTEN, message, {
      expected: 'a port this process can listen on: another --port N (0 picks a free one)',
    });
  }
  const { instance } = where;
  const connectors = (instance.admin as { connectors?: unknown } | null)?.connectors;
  const index = Array.isArray(connectors)
    ? connectors.findIndex((c) => (c as { port?: unknown } | null)?.port === port)
    : -1;
  return new PorticoError(ErrorCode.LISTEN, message, {
    file: instance.adminFile,
    jsonPath: index < 0 ? '$.connectors' : `$.connectors[${index}].port`,
    expected:
      index < 0
        ? 'a port this process can listen on: start with --port N, or give admin.json connectors (the default is port 8080)'
        : `a port this process can listen on: change admin.json connectors[${index}].port, or start with --port N`,
  });
}
