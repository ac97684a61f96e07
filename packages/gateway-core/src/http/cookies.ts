/** A cookie a request carries (`Cookie` header). */
export interface RequestCookie {
  name: string;
  value: string;
}

/**
 * Parses `Cookie` headers into name → cookies (a name may repeat). Values keep their quotes as
 * sent; malformed pairs are skipped, never fatal.
 */
export function parseCookieHeaders(headers: readonly string[]): Record<string, RequestCookie[]> {
  const out: Record<string, RequestCookie[]> = Object.create(null);
  for (const header of headers) {
    for (const part of header.split(';')) {
      const eq = part.indexOf('=');
      if (eq <= 0) continue;
      const name = part.slice(0, eq).trim();
      if (!name) continue;
      (out[name] ??= []).push({ name, value: part.slice(eq + 1).trim() });
    }
  }
  return out;
}
