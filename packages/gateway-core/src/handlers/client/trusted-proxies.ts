import { BlockList, isIPv4, isIPv6 } from 'node:net';
import { ErrorCode, PorticoError } from '../../errors.ts';

/** Whether a client address belongs to a proxy whose X-Forwarded-* fields the handler passes on. */
export type TrustedProxies = (address: string) => boolean;

const CIDR = /^([^/]+)\/(\d{1,3})$/;

/**
 * The addresses (`10.0.0.7`, `::1`) and blocks (`10.0.0.0/8`, `fd00::/8`) of `trustedProxies`, or
 * undefined for none, so that a handler trusting nobody asks nothing per request. A bad entry is a
 * PORTICO_E_CONFIG naming it.
 */
export function trustedProxies(
  entries: readonly string[] | undefined,
  where: { file?: string | undefined; jsonPath: string },
): TrustedProxies | undefined {
  if (entries === undefined || entries.length === 0) return undefined;
  const list = new BlockList();
  entries.forEach((entry, index) => {
    const block = CIDR.exec(entry);
    const address = block ? block[1]! : entry;
    const family = isIPv4(address) ? 'ipv4' : isIPv6(address) ? 'ipv6' : undefined;
    const bits = block ? Number(block[2]) : undefined;
    if (family === undefined || (bits !== undefined && bits > (family === 'ipv4' ? 32 : 128))) {
      throw new PorticoError(
        ErrorCode.CONFIG,
        `trustedProxies: ${JSON.stringify(entry)} is not an address or a block`,
        {
          ...(where.file === undefined ? {} : { file: where.file }),
          jsonPath: `${where.jsonPath}.trustedProxies[${index}]`,
          expected: 'an IP address (10.0.0.7, ::1) or a CIDR block (10.0.0.0/8, fd00::/8)',
        },
      );
    }
    if (bits === undefined) list.addAddress(address, family);
    else list.addSubnet(address, bits, family);
  });
  // contexts.client shows IPv4 clients of a dual-stack listener in dotted form (client-address.ts).
  return (address) => address !== '' && list.check(address, isIPv4(address) ? 'ipv4' : 'ipv6');
}
