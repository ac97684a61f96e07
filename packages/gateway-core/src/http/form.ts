import {
  formEncodeParameterNameOrValue,
  urlEncodeQueryParameterNameOrValue,
} from '../expression/java/uris.ts';

/** Form fields in order: name → values, or [name, value] pairs (a name may repeat). */
export type FormFields = Readonly<Record<string, readonly string[]>> | Iterable<readonly [string, string]>;

function pairs(fields: FormFields): Iterable<readonly [string, string]> {
  if (Symbol.iterator in fields) return fields as Iterable<readonly [string, string]>;
  return Object.entries(fields as Record<string, readonly string[]>).flatMap(([name, values]) =>
    values.map((value) => [name, value] as const),
  );
}

/**
 * An `application/x-www-form-urlencoded` body (`a=1&b=x+y`): names and values encoded as Java's
 * `URLEncoder` does, so a space is `+`.
 */
export function encodeForm(fields: FormFields): string {
  const out: string[] = [];
  for (const [name, value] of pairs(fields)) {
    out.push(`${formEncodeParameterNameOrValue(name)}=${formEncodeParameterNameOrValue(value)}`);
  }
  return out.join('&');
}

/**
 * A query string (`a=1&b=x%20y`): names and values percent-encoded as RFC 3986 query parameters,
 * so a space is `%20` and `&`, `=`, `+` and `#` are escaped.
 */
export function encodeQuery(fields: FormFields): string {
  const out: string[] = [];
  for (const [name, value] of pairs(fields)) {
    out.push(`${urlEncodeQueryParameterNameOrValue(name)}=${urlEncodeQueryParameterNameOrValue(value)}`);
  }
  return out.join('&');
}
