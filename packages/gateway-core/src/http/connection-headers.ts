import { equalIgnoringAsciiCase, FieldNameSet, fieldKey } from './field-names.ts';

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
 * Adds to `into` each name (lower case) that one Connection field value lists, leaving out those
 * `except` holds, and returns it: the set is made only when there is a name to add, and the usual
 * one-token value (`keep-alive`, `close`) is read without a list of tokens or a callback.
 */
export function addConnectionTokens(
  value: string,
  into: Set<string> | undefined,
  except?: ReadonlySet<string>,
): Set<string> | undefined {
  if (!value.includes(',')) return addToken(value, into, except);
  for (const token of value.split(',')) into = addToken(token, into, except);
  return into;
}

function addToken(
  token: string,
  into: Set<string> | undefined,
  except: ReadonlySet<string> | undefined,
): Set<string> | undefined {
  const name = fieldKey(token.trim());
  if (name === '' || except?.has(name)) return into;
  (into ??= new Set()).add(name);
  return into;
}

/** The names (lower case) a Connection header lists. */
export function connectionListed(values: readonly string[]): Set<string> {
  let listed: Set<string> | undefined;
  for (const value of values) listed = addConnectionTokens(value, listed);
  return listed ?? new Set();
}

/**
 * Whether a Transfer-Encoding value says chunked and nothing else, in any case and spacing (as nearly
 * every chunked message does). Node's and undici's parsers accept `gzip, chunked` and only de-chunk:
 * what such a value leaves coded, the gateway does not decode.
 */
export function isChunkedOnly(codings: string | readonly string[]): boolean {
  if (typeof codings === 'string' && equalIgnoringAsciiCase(codings, 'chunked')) return true;
  const tokens = String(codings)
    .split(',')
    .map((token) => token.trim())
    .filter((token) => token !== '');
  return tokens.length === 1 && equalIgnoringAsciiCase(tokens[0]!, 'chunked');
}
