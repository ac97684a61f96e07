import { BlockList, isIPv4, isIPv6 } from 'node:net';
import type { Schema } from '../../config/schema.ts';
import { s } from '../../config/schema-builders.ts';
import { ErrorCode, PorticoError } from '../../errors.ts';

/** Whether a client address belongs to a proxy whose X-Forwarded-* fields the handler passes on. */
export type TrustedProxies = (address: string) => boolean;

const CIDR = /^([^/]+)\/(\d{1,3})$/;
const EXPECTED = 'an IP address (10.0.0.7, ::1) or a CIDR block (10.0.0.0/8, fd00::/8)';

interface Entry {
  address: string;
  family: 'ipv4' | 'ipv6';
  bits: number | undefined;
}

/** An entry of `trustedProxies` (`10.0.0.7`, `10.0.0.0/8`), or undefined when it is neither. */
function entryOf(text: string): Entry | undefined {
  const block = CIDR.exec(text);
  const address = block ? block[1]! : text;
  const family = isIPv4(address) ? 'ipv4' : isIPv6(address) ? 'ipv6' : undefined;
  const bits = block ? Number(block[2]) : undefined;
  if (family === undefined || (bits !== undefined && bits > (family === 'ipv4' ? 32 : 128))) return undefined;
  return { address, family, bits };
}

/**
 * An entry of the `trustedProxies` setting, checked by the schema: its messages describe a value
 * that came from the environment instead of quoting it.
 */
export function trustedProxySetting(): Schema<string> {
  return s
    .string()
    .refine(
      (text) => (entryOf(text) ? undefined : `${JSON.stringify(text)} is not an address or a block`),
      EXPECTED,
    );
}

/**
 * The addresses (`10.0.0.7`, `::1`) and blocks (`10.0.0.0/8`, `fd00::/8`) of `trustedProxies`, or
 * undefined for none, so that a handler trusting nobody asks nothing per request. A bad entry (given
 * by code: the configuration's are checked by trustedProxySetting) is a PORTICO_E_CONFIG naming it.
 */
export function trustedProxies(
  entries: readonly string[] | undefined,
  where: { file?: string | undefined; jsonPath: string },
): TrustedProxies | undefined {
  if (entries === undefined || entries.length === 0) return undefined;
  const list = new BlockList();
  entries.forEach((text, index) => {
    const entry = entryOf(text);
    if (entry === undefined) {
      throw new PorticoError(
        ErrorCode.CONFIG,
        `trustedProxies: ${JSON.stringify(text)} is not an address or a block`,
        {
          ...(where.file === undefined ? {} : { file: where.file }),
          jsonPath: `${where.jsonPath}.trustedProxies[${index}]`,
          expected: EXPECTED,
        },
      );
    }
    if (entry.bits === undefined) list.addAddress(entry.address, entry.family);
    else list.addSubnet(entry.address, entry.bits, entry.family);
  });
  // contexts.client shows IPv4 clients of a dual-stack listener in dotted form (client-address.ts).
  return (address) => address !== '' && list.check(address, isIPv4(address) ? 'ipv4' : 'ipv6');
}
