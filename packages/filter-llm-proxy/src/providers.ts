import { Uri } from '@portico/gateway-core';

/** The provider kinds, by their canonical names. */
export const PROVIDER_NAMES = [
  'OPENAI',
  'ANTHROPIC',
  'MISTRAL',
  'AZURE_OPENAI',
  'OPENAI_COMPATIBLE',
] as const;
export type ProviderName = (typeof PROVIDER_NAMES)[number];

/** The spec's neutral names for the same five kinds, in the same order. */
export const PROVIDER_ALIASES: Readonly<Record<string, ProviderName>> = {
  VENDORA: 'OPENAI',
  VENDORB: 'ANTHROPIC',
  VENDORC: 'MISTRAL',
  CLOUDVENDOR_VENDORA: 'AZURE_OPENAI',
  VENDORA_COMPATIBLE: 'OPENAI_COMPATIBLE',
};

/** The Anthropic API version sent when the client names none. */
export const DEFAULT_ANTHROPIC_VERSION = '2023-06-01';

/** What the proxy knows of a provider kind. */
export interface Provider {
  readonly name: ProviderName;
  /** The base URL used without `baseUrl`; undefined when the provider has none (Azure, compatible). */
  readonly defaultBaseUrl: string | undefined;
  /** Sets the provider's credential on the upstream request's headers. */
  authenticate(
    headers: { set(name: string, value: string): unknown; has(name: string): boolean },
    key: string,
  ): void;
  /**
   * True when the provider serves OpenAI models whatever the request names (OpenAI and Azure
   * OpenAI): prompts are counted by OpenAI's tokenizer. Others use it only for an OpenAI model name.
   */
  readonly openAiFamily: boolean;
}

const bearer = (headers: { set(name: string, value: string): unknown }, key: string) =>
  headers.set('Authorization', `Bearer ${key}`);

export const PROVIDERS: Readonly<Record<ProviderName, Provider>> = {
  OPENAI: {
    name: 'OPENAI',
    defaultBaseUrl: 'https://api.openai.com/v1',
    authenticate: bearer,
    openAiFamily: true,
  },
  ANTHROPIC: {
    name: 'ANTHROPIC',
    defaultBaseUrl: 'https://api.anthropic.com/v1',
    authenticate: (headers, key) => {
      headers.set('x-api-key', key);
      if (!headers.has('anthropic-version')) headers.set('anthropic-version', DEFAULT_ANTHROPIC_VERSION);
    },
    openAiFamily: false,
  },
  MISTRAL: {
    name: 'MISTRAL',
    defaultBaseUrl: 'https://api.mistral.ai/v1',
    authenticate: bearer,
    openAiFamily: false,
  },
  AZURE_OPENAI: {
    name: 'AZURE_OPENAI',
    defaultBaseUrl: undefined,
    authenticate: (headers, key) => headers.set('api-key', key),
    openAiFamily: true,
  },
  OPENAI_COMPATIBLE: {
    name: 'OPENAI_COMPATIBLE',
    defaultBaseUrl: undefined,
    authenticate: bearer,
    openAiFamily: false,
  },
};

/** Every name a configuration may write, canonical names first, for messages. */
export const ACCEPTED_PROVIDER_NAMES: readonly string[] = [
  ...PROVIDER_NAMES,
  ...Object.keys(PROVIDER_ALIASES),
];

/** The provider a configured name stands for (case-insensitive, aliases included), else undefined. */
export function providerNamed(text: string): Provider | undefined {
  const upper = text.trim().toUpperCase();
  const name = (PROVIDER_NAMES as readonly string[]).includes(upper)
    ? (upper as ProviderName)
    : PROVIDER_ALIASES[upper];
  return name === undefined ? undefined : PROVIDERS[name];
}

/**
 * Request headers that carry the client's credentials, for the gateway or for a provider: none of
 * them reaches the provider, which gets the configured key instead.
 */
export const CLIENT_CREDENTIAL_HEADERS: readonly string[] = [
  'Authorization',
  'Proxy-Authorization',
  'x-api-key',
  'api-key',
  'x-goog-api-key',
  'Cookie',
];

/** A checked base URL: an absolute http or https URI without query or fragment. */
export interface BaseUrl {
  readonly scheme: string;
  readonly host: string;
  readonly port: number | null;
  /** The path's segments (no empty ones): `https://host/v1/` has ['v1']. */
  readonly segments: readonly string[];
}

/** The base URL written in `text`, or what is wrong with it. */
export function parseBaseUrl(text: string): BaseUrl | string {
  let uri: Uri;
  try {
    uri = Uri.parse(text.trim());
  } catch {
    return `'${text}' is not a URI`;
  }
  const scheme = uri.scheme?.toLowerCase();
  if ((scheme !== 'http' && scheme !== 'https') || !uri.host)
    return `'${text}' is not an absolute http or https URL`;
  if (uri.rawQuery !== null || uri.rawFragment !== null)
    return `'${text}' has a query or a fragment; a base URL has neither`;
  return { scheme, host: uri.host, port: uri.port, segments: uri.rawPath.split('/').filter(Boolean) };
}

/**
 * The request's URI moved onto `base`: scheme, host and port from the base, and the request's own
 * path after the base's path, the two overlapping where the end of the base's path is the start of
 * the request's (`/v1` and `/v1/embeddings` give `/v1/embeddings`, `/proxy/v1` and
 * `/v1/chat/completions` give `/proxy/v1/chat/completions`, `/v1` and `/chat/completions` give
 * `/v1/chat/completions`). The query is the request's.
 */
export function rebaseOnto(base: BaseUrl, uri: Uri): Uri {
  const own = uri.rawPath.split('/');
  // own[0] is '' (the path is absolute); a trailing '' is kept, so '/v1/models/' keeps its slash.
  const segments = own.slice(1);
  const overlap = longestOverlap(base.segments, segments);
  const path = `/${[...base.segments.slice(0, base.segments.length - overlap), ...segments].join('/')}`;
  return uri.with({ scheme: base.scheme, host: base.host, port: base.port, rawPath: path, userInfo: null });
}

/** The most segments that end `base` and start `path`. */
function longestOverlap(base: readonly string[], path: readonly string[]): number {
  for (let length = Math.min(base.length, path.length); length > 0; length--) {
    let same = true;
    for (let i = 0; i < length && same; i++) same = base[base.length - length + i] === path[i];
    if (same) return length;
  }
  return 0;
}
