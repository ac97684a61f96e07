import { ErrorCode, PorticoError } from '@portico/gateway-core';
import type { Instance } from '../server/instance.ts';
import type { Connector } from '../server/server.ts';

/** Why a socket cannot listen on its port, by the system's error code: the port is at fault. */
const PORT_REASONS: Record<string, string> = {
  EADDRINUSE: 'is already in use',
  EACCES: 'is not allowed for this user (ports below 1024 need privileges)',
};

/** Why a socket cannot listen on its host, by the system's (or the resolver's) error code. */
const HOST_REASONS: Record<string, string> = {
  EADDRNOTAVAIL: 'is not an address of this machine',
  ENOTFOUND: 'is not an address of this machine: no such host name',
  EAI_AGAIN: 'could not be resolved to an address (the name server did not answer)',
};

/** What to give instead of a host that is not this machine's. */
const A_HOST = "an address of one of this machine's network interfaces (127.0.0.1 for loopback only)";

/**
 * The coded error for a connector that cannot listen, naming what is at fault and where it was
 * given: the port (in use, privileged) or the host (not an address of this machine, a name that
 * does not resolve), from `--port`/`--host`, admin.json's `connectors[i]` (whether written plainly,
 * as a `&{token}` or as an expression), or the default connector. Undefined for any other error.
 */
export function listenError(
  error: unknown,
  where: { instance: Instance; connector: Connector | undefined },
): PorticoError | undefined {
  const failure = error as (NodeJS.ErrnoException & { port?: number; address?: string | null }) | undefined;
  const code = failure?.code;
  if (code === undefined) return undefined;
  const syscall = failure?.syscall;
  const { connector, instance } = where;
  if (
    HOST_REASONS[code] !== undefined &&
    (syscall === 'listen' || syscall === 'bind' || syscall === 'getaddrinfo')
  ) {
    const host = connector?.host ?? failure?.address ?? (failure as { hostname?: string }).hostname ?? '?';
    const port = connector?.port ?? failure?.port;
    const message = `cannot listen${port === undefined ? '' : ` on port ${port}`}: host ${host} ${HOST_REASONS[code]}`;
    if (connector?.hostFrom === 'option') {
      return new PorticoError(ErrorCode.LISTEN, message, {
        expected: `${A_HOST}: another --host H, or no --host to listen on every address`,
      });
    }
    const index = connector?.index;
    return new PorticoError(ErrorCode.LISTEN, message, {
      file: instance.adminFile,
      jsonPath: index === undefined ? '$.connectors' : `$.connectors[${index}].host`,
      expected:
        index === undefined
          ? `${A_HOST}: start with --host H`
          : `${A_HOST}: change admin.json connectors[${index}].host (leave it out to listen on every address), or start with --host H`,
    });
  }
  const reason = PORT_REASONS[code];
  if (reason === undefined || (syscall !== 'listen' && syscall !== 'bind')) return undefined;
  const port = failure?.port ?? connector?.port;
  const address = failure?.address ? ` (address ${failure.address})` : '';
  const message = `cannot listen: port ${port ?? '?'}${address} ${reason}`;
  if (connector?.portFrom === 'option') {
    return new PorticoError(ErrorCode.LISTEN, message, {
      expected: 'a port this process can listen on: another --port N (0 picks a free one)',
    });
  }
  const index = connector === undefined ? adminIndex(instance, port) : connector.index;
  return new PorticoError(ErrorCode.LISTEN, message, {
    file: instance.adminFile,
    jsonPath: index === undefined ? '$.connectors' : `$.connectors[${index}].port`,
    expected:
      index === undefined
        ? 'a port this process can listen on: start with --port N, or give admin.json connectors (the default is port 8080)'
        : `a port this process can listen on: change admin.json connectors[${index}].port, or start with --port N`,
  });
}

/** The admin.json connector of this port, when the failure does not say which connector it was. */
function adminIndex(instance: Instance, port: number | undefined): number | undefined {
  const connectors = (instance.admin as { connectors?: unknown } | null)?.connectors;
  if (!Array.isArray(connectors) || port === undefined) return undefined;
  // A port written as a `&{token}` is read as text.
  const index = connectors.findIndex((c) => Number((c as { port?: unknown } | null)?.port) === port);
  return index < 0 ? undefined : index;
}
