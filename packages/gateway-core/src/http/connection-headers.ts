/**
 * Header fields that describe one connection, not the message (RFC 9110 §7.6.1): Connection itself,
 * the fields it lists, and those "known to require removal before forwarding" (Proxy-Connection,
 * Keep-Alive, TE, Transfer-Encoding, Upgrade), plus Trailer, since the gateway relays no trailers.
 * They stop at the gateway both ways: removed when a request arrives, never copied from a response
 * object to the wire, never sent upstream. The upstream client adds the proxy credentials fields.
 */
export const CONNECTION_HEADERS: ReadonlySet<string> = new Set([
  'connection',
  'keep-alive',
  'proxy-connection',
  'te',
  'trailer',
  'transfer-encoding',
  'upgrade',
]);

/** The names (lower case) a Connection header lists. */
export function connectionListed(values: readonly string[]): Set<string> {
  const listed = new Set<string>();
  for (const value of values) {
    // One token (`keep-alive`, `close`): no list to split.
    if (!value.includes(',')) {
      const name = value.trim().toLowerCase();
      if (name) listed.add(name);
      continue;
    }
    for (const token of value.split(',')) {
      const name = token.trim().toLowerCase();
      if (name) listed.add(name);
    }
  }
  return listed;
}
