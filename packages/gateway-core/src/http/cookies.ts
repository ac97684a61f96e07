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

/** A cookie a response sets (`Set-Cookie`, or one cookie of a `Set-Cookie2` header). */
export interface ResponseCookie {
  name: string;
  value: string;
  /**
   * Attributes by lower-cased name (`path`, `domain`, `expires`, `max-age`, `secure` ...); flags have
   * the value ''. Surrounding quotes are removed; when an attribute repeats, the last one counts.
   */
  attributes: Record<string, string>;
}

/**
 * Parses one `Set-Cookie` value (`name=value; Path=/; HttpOnly`). Undefined when there is no
 * `name=` pair to speak of; unknown attributes are kept, malformed ones skipped.
 */
export function parseSetCookie(header: string): ResponseCookie | undefined {
  const [pair = '', ...rest] = header.split(';');
  const eq = pair.indexOf('=');
  const name = eq < 0 ? '' : pair.slice(0, eq).trim();
  if (!name) return undefined;
  const attributes: Record<string, string> = Object.create(null);
  for (const part of rest) {
    const at = part.indexOf('=');
    const key = (at < 0 ? part : part.slice(0, at)).trim().toLowerCase();
    if (key) attributes[key] = at < 0 ? '' : unquote(part.slice(at + 1).trim());
  }
  return { name, value: pair.slice(eq + 1).trim(), attributes };
}

/**
 * Splits a `Set-Cookie2` value (RFC 2965), which may carry several cookies separated by commas, at
 * the commas outside quoted strings.
 */
export function splitSetCookie2(header: string): string[] {
  const out: string[] = [];
  let quoted = false;
  let start = 0;
  for (let i = 0; i < header.length; i++) {
    const c = header[i];
    if (c === '"') quoted = !quoted;
    else if (c === '\\' && quoted) i++;
    else if (c === ',' && !quoted) {
      out.push(header.slice(start, i));
      start = i + 1;
    }
  }
  out.push(header.slice(start));
  return out.map((part) => part.trim()).filter((part) => part.length > 0);
}

function unquote(text: string): string {
  return text.length >= 2 && text.startsWith('"') && text.endsWith('"') ? text.slice(1, -1) : text;
}
