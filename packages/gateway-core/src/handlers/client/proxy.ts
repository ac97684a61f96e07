import { brandClass } from '../../brand.ts';
import { fail, INVALID, type ParseContext } from '../../config/parse-context.ts';
import { referenceFrom } from '../../config/reference-schema.ts';
import type { Infer, Schema } from '../../config/schema.ts';
import { s } from '../../config/schema-builders.ts';
import { quoteSetting } from '../../config/secret-redaction.ts';
import { isRecord } from '../../is-record.ts';
import { custom, fromText, inlineDeclaration, typed } from './schema-helpers.ts';

/** How upstream connections are made: directly, through an HTTP proxy, or as the environment says. */
export type ProxySetting =
  | { kind: 'none' }
  /** HTTP_PROXY, HTTPS_PROXY and NO_PROXY (or their lower-case forms), read when the handler is created. */
  | { kind: 'system' }
  | { kind: 'http'; uri: string; username?: string; password?: string };

export const NO_PROXY: ProxySetting = Object.freeze({ kind: 'none' });

/** A named `ProxyOptions` heap object. */
export class ProxyOptions {
  readonly setting: ProxySetting;

  constructor(setting: ProxySetting) {
    this.setting = setting;
  }
}

/** `host:port` reads as `http://host:port`; anything but an http(s) URI is refused. */
const proxyUri = (): Schema<string> =>
  fromText(
    'a proxy URI such as "http://proxy.example.com:3128"',
    (parsed, path, ctx) => {
      const candidate = /^[a-z][a-z0-9+.-]*:\/\//i.test(parsed) ? parsed : `http://${parsed}`;
      try {
        const url = new URL(candidate);
        if (url.protocol === 'http:' || url.protocol === 'https:') return candidate;
      } catch {
        // reported below
      }
      return fail(
        ctx,
        path,
        `${quoteSetting(ctx, path, parsed)} is not an HTTP proxy URI`,
        'an http:// or https:// URI',
      );
    },
    () => ({ type: 'string', format: 'uri' }),
  );

const serverConfig = typed(
  s.object({
    uri: proxyUri(),
    username: s.string().optional(),
    password: s.string().optional(),
  }),
);

// PingGateway's ProxyOptions names its kind of proxy; SOCKS proxies are not supported here.
const proxyOptionsConfig = typed(
  s.object({
    type: s.enumOf(['HTTP'] as const).default('HTTP'),
    uri: proxyUri(),
    username: s.string().optional(),
    password: s.string().optional(),
  }),
);

function toHttp(config: { uri: string; username?: string; password?: string }): ProxySetting {
  return {
    kind: 'http',
    uri: config.uri,
    ...(config.username === undefined ? {} : { username: config.username }),
    ...(config.password === undefined ? {} : { password: config.password }),
  };
}

const constant = (setting: ProxySetting): Schema<ProxySetting> =>
  custom('an empty object', (value, path, ctx) =>
    isRecord(value) && Object.keys(value).length === 0
      ? setting
      : fail(ctx, path, 'takes no settings', 'an empty object'),
  );

const DECLARATION_TYPES: Record<string, Schema<ProxySetting>> = {
  ProxyOptions: custom('ProxyOptions settings', (value, path, ctx) => {
    const parsed = proxyOptionsConfig.parse(value, path, ctx);
    return parsed === INVALID ? INVALID : toHttp(parsed);
  }),
  SystemProxyOptions: constant({ kind: 'system' }),
  NoProxyOptions: constant(NO_PROXY),
};

/** The deprecated `proxy`: a Server (`{uri, username, password}`), or just its URI. */
export const proxySetting = (): Schema<ProxySetting> =>
  custom(
    'a proxy URI or {"uri", "username", "password"}',
    (value, path, ctx) => {
      const parsed =
        typeof value === 'string'
          ? serverConfig.parse({ uri: value }, path, ctx)
          : serverConfig.parse(value, path, ctx);
      return parsed === INVALID ? INVALID : toHttp(parsed);
    },
    () => ({ oneOf: [{ type: 'string' }, serverConfig.jsonSchema()] }),
  );

/**
 * `proxyOptions`: the name of a ProxyOptions heap object, an inline declaration (ProxyOptions,
 * SystemProxyOptions or NoProxyOptions, read in place), or the ProxyOptions settings themselves.
 */
export const proxyOptionsSetting = (): Schema<ProxySetting | ProxyOptions> =>
  custom(
    'the name of a ProxyOptions, an inline ProxyOptions declaration or proxy settings',
    (value: unknown, path: string, ctx: ParseContext) => {
      if (typeof value === 'string' && value !== '') {
        return referenceFrom(ctx, path, 'object', value, ['ProxyOptions']) as unknown as ProxyOptions;
      }
      if (!isRecord(value))
        return fail(ctx, path, `${quoteSetting(ctx, path, value)} is not proxy settings`, 'an object');
      if (typeof value.type === 'string' && value.type in DECLARATION_TYPES) {
        return inlineDeclaration(value, path, ctx, DECLARATION_TYPES);
      }
      return DECLARATION_TYPES.ProxyOptions!.parse(value, path, ctx);
    },
    () => ({
      anyOf: [s.ref('object', Object.keys(DECLARATION_TYPES)).jsonSchema(), proxyOptionsConfig.jsonSchema()],
    }),
  );

export const proxyOptionsHeapletConfig: Schema<Infer<typeof proxyOptionsConfig>> = proxyOptionsConfig;
export { toHttp as proxySettingFromConfig };

// Objects of these classes cross package boundaries (plugins make and read them): one identity for
// every copy of the core (brand.ts).
brandClass(ProxyOptions, 'ProxyOptions');
