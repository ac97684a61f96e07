/**
 * An address in the one form the gateway shows it everywhere (`contexts.client`, X-Forwarded-For,
 * admin `allowedAddresses`, throttling partitions, logs): an IPv4 client reaching a dual-stack
 * listener arrives as `::ffff:127.0.0.1`, and is shown as `127.0.0.1`, so that a condition
 * `${contexts.client.remoteAddress == '127.0.0.1'}` means what it says.
 */
export function plainAddress(address: string): string {
  if (
    address.length > 7 &&
    address.charCodeAt(0) === 58 /* : */ &&
    /^::ffff:\d+\.\d+\.\d+\.\d+$/i.test(address)
  )
    return address.slice(7);
  return address;
}
