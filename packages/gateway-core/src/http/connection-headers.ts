import { FieldNameSet, fieldKey } from './field-names.ts';

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

/** CONNECTION_HEADERS asked about in any case without a lower-cased copy of every name. */
export const CONNECTION_FIELDS = new FieldNameSet(CONNECTION_HEADERS);

/**
 * Calls `visit` with each name (lower case) one Connection field value lists, without making a list
 * for the usual one-token value (`keep-alive`, `close`).
 */
export function forEachConnectionToken(value: string, visit: (name: string) => void): void {
  if (!value.includes(',')) {
    const name = fieldKey(value.trim());
    if (name) visit(name);
    return;
  }
  for (const token of value.split(',')) {
    const name = fieldKey(token.trim());
    if (name) visit(name);
  }
}

/** The names (lower case) a Connection header lists. */
export function connectionListed(values: readonly string[]): Set<string> {
  const listed = new Set<string>();
  const add = (name: string) => listed.add(name);
  for (const value of values) forEachConnectionToken(value, add);
  return listed;
}
