import { lookup } from 'node:dns/promises';
import { BlockList, isIP } from 'node:net';
import type { Context, Handler, Request, Response } from '@portico/gateway-core';
import { OAuth2Error } from './registration.ts';

/**
 * Addresses a gateway must not be sent to on a client's word: this host, private networks,
 * link-local (cloud metadata services live there), carrier-grade NAT, benchmarking, multicast and
 * reserved ranges, in IPv4 and IPv6 (IPv4-mapped IPv6 addresses are checked as IPv4).
 */
const NOT_PUBLIC = new BlockList();
for (const [network, prefix] of [
  ['0.0.0.0', 8],
  ['10.0.0.0', 8],
  ['100.64.0.0', 10],
  ['127.0.0.0', 8],
  ['169.254.0.0', 16],
  ['172.16.0.0', 12],
  ['192.0.0.0', 24],
  ['192.0.2.0', 24],
  ['192.168.0.0', 16],
  ['198.18.0.0', 15],
  ['198.51.100.0', 24],
  ['203.0.113.0', 24],
  ['224.0.0.0', 4],
  ['240.0.0.0', 4],
] as const)
  NOT_PUBLIC.addSubnet(network, prefix, 'ipv4');
for (const [network, prefix] of [
  ['::', 128],
  ['::1', 128],
  ['64:ff9b::', 96],
  ['100::', 64],
  ['2001:db8::', 32],
  ['fc00::', 7],
  ['fe80::', 10],
  ['ff00::', 8],
] as const)
  NOT_PUBLIC.addSubnet(network, prefix, 'ipv6');

/** Whether `address` (an IP literal) is a public unicast address. */
export function isPublicAddress(address: string): boolean {
  const family = isIP(address);
  if (family === 4) return !NOT_PUBLIC.check(address, 'ipv4');
  if (family !== 6) return false;
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(address)?.[1];
  if (mapped !== undefined) return isPublicAddress(mapped);
  return !NOT_PUBLIC.check(address, 'ipv6');
}

/** How a host name is resolved: every address it has (the test seam; the system resolver by default). */
export type Resolve = (host: string) => Promise<readonly string[]>;

const systemResolve: Resolve = async (host) =>
  (await lookup(host, { all: true, verbatim: true })).map((entry) => entry.address);

/**
 * `handler` for the exchanges a client's discovery input starts (WebFinger, the discovery document,
 * dynamic registration, and everything the registration made there does later): each request is
 * refused, before it is sent, when its host is or resolves to an address that is not public. A
 * client who types `http://169.254.169.254/` or a name resolving to 10.0.0.5 gets an
 * `invalid_request`, never the gateway's own network (departure 64). The check is made before the
 * handler resolves the name again, so a name whose answers change between the two lookups (DNS
 * rebinding) is not covered: an operator who must exclude that names a `discoveryHandler` going
 * through an egress proxy.
 */
export function publicAddressesOnly(handler: Handler, resolve: Resolve = systemResolve): Handler {
  return {
    async handle(context: Context, request: Request): Promise<Response> {
      const bracketed = request.uri.host ?? '';
      const host = bracketed.startsWith('[') ? bracketed.slice(1, -1) : bracketed;
      const addresses = isIP(host) === 0 ? await resolveOrRefuse(host, resolve) : [host];
      const refused = addresses.find((address) => !isPublicAddress(address));
      if (refused !== undefined || addresses.length === 0)
        throw new OAuth2Error({
          error: 'invalid_request',
          error_description: `discovery reaches public addresses only: ${host} is ${refused ?? 'not resolvable'}`,
        });
      return handler.handle(context, request);
    },
  };
}

async function resolveOrRefuse(host: string, resolve: Resolve): Promise<readonly string[]> {
  try {
    return await resolve(host);
  } catch {
    return [];
  }
}
