import { compileJavaRegex } from '@portico/gateway-core';

/** A `supportedDomains` entry, compiled once at load. */
export interface DomainMatcher {
  readonly written: string;
  readonly pattern: RegExp;
}

/** The longest domain (a host, or a host and port) compared; a longer one matches nothing. */
const MAX_DOMAIN_LENGTH = 261;

/**
 * A `supportedDomains` entry: a Java regular expression, as the incumbents wrote them
 * (`"openam.com"`, `"openam.com:8092"`, `"allopenamdomains.*"`), that must match the whole domain
 * (host, or host:port), letters of either case. It runs on the core's linear-time engine, so the
 * time a match takes grows with the domain's length only, whatever the pattern. Throws a
 * PORTICO_E_EXPRESSION error for a pattern that does not compile.
 */
export function domainMatcher(written: string): DomainMatcher {
  return { written, pattern: compileJavaRegex(`(?i)^(?:${written})$`) };
}

/** The reason `written` is no usable pattern, or undefined: for the schema's refine. */
export function domainPatternProblem(written: string): string | undefined {
  if (/^[a-z][a-z0-9+.-]*:\/\//i.test(written) || written.endsWith('/'))
    return `'${written}' is not a domain: write the host (and port), without scheme or slash`;
  try {
    domainMatcher(written);
    return undefined;
  } catch (error) {
    return `'${written}' is not a regular expression: ${(error as Error).message}`;
  }
}

/**
 * Whether `domain` (the part of an e-mail address after `@`, or a host[:port]) belongs to an issuer:
 * it is one of the issuer's own hosts (`own`, compared ignoring case) or matches one of its
 * `supportedDomains`.
 */
export function matchesDomain(
  domain: string,
  own: readonly string[],
  patterns: readonly DomainMatcher[],
): boolean {
  const candidate = domain.trim().toLowerCase();
  if (candidate === '' || candidate.length > MAX_DOMAIN_LENGTH || /[\s/@]/.test(candidate)) return false;
  if (own.some((host) => host.toLowerCase() === candidate)) return true;
  return patterns.some(({ pattern }) => pattern.test(candidate));
}
