import { Duration, defineHeaplet, type Handler, s } from '@portico/gateway-core';
import { compileLValue } from '@portico/gateway-core/expressions';
import { executorSetting, resolveExecutor } from '@portico/gateway-core/scheduling';
import { OAuth2ClientConfigSchema, OriginsSchema, RegistrationsSchema } from './config-schemas.ts';
import { discoverIssuer } from './discovery.ts';
import { registerClient } from './dynamic-registration.ts';
import { GotoPolicy } from './goto-policy.ts';
import { Registrations } from './login-choice.ts';
import { OAuth2ClientFilter } from './oauth2-client-filter.ts';
import { publicAddressesOnly } from './public-addresses.ts';
import { UserInfoCache, userInfoSweepInterval } from './user-info.ts';

/** Where the filter writes when no `target` is given: `${exchange.openid}` of OpenIG 3/4 is the same map. */
export const DEFAULT_TARGET = '${attributes.openid}';

const metadataSchema = s.map(s.any()).refine((metadata) => {
  const uris = metadata.redirect_uris;
  if (!Array.isArray(uris) || uris.length === 0 || !uris.every((u) => typeof u === 'string'))
    return 'the client metadata needs redirect_uris, an array of URIs';
  if (
    metadata.scopes !== undefined &&
    !(Array.isArray(metadata.scopes) && metadata.scopes.every((x) => typeof x === 'string'))
  )
    return 'the scopes of the client metadata are not an array of strings';
  return undefined;
}, 'client metadata (RFC 7591) with redirect_uris');

export const OAuth2ClientFilterHeaplet = defineHeaplet({
  type: 'OAuth2ClientFilter',
  kind: 'filter',
  config: new OAuth2ClientConfigSchema(
    s.object({
      clientEndpoint: s.expression('string'),
      failureHandler: s.ref<Handler>('handler'),
      discoveryHandler: s.ref<Handler>('handler').optional(),
      loginHandler: s.ref<Handler>('handler').optional(),
      registrations: new RegistrationsSchema('a ClientRegistration').optional(),
      metadata: metadataSchema.optional(),
      cacheExpiration: s.duration().default(() => Duration.parse('20 seconds')),
      // What sweeps expired user info out of the cache (the heap's ScheduledExecutorService unless named).
      executor: executorSetting(),
      target: s.lvalue().optional(),
      defaultLoginGoto: s.expression('string').optional(),
      defaultLogoutGoto: s.expression('string').optional(),
      requireHttps: s.boolean().default(true),
      requireLogin: s.boolean().default(true),
      // Portico's own (departure 53): where `goto` may lead besides the gateway itself.
      allowedGotoOrigins: new OriginsSchema().optional(),
      // OpenIG 3/4: providers (OAuth2Provider objects, or inline), the scopes asked for when a
      // provider names none, and the handler that reached the providers.
      providers: new RegistrationsSchema('an OAuth2Provider', 'OAuth2Provider').optional(),
      scopes: s.array(s.expression('string')).optional(),
      providerHandler: s.ref<Handler>('handler').optional(),
    }),
  ),
  create: async ({ config, heap, logger, name, onDestroy }) => {
    // With requireHttps false, the providers' endpoints may be plain HTTP too.
    const configured = [...(config.registrations ?? []), ...(config.providers ?? [])].map((registration) =>
      config.requireHttps ? registration : (registration.allowingHttp?.() ?? registration),
    );
    const cacheMs = config.cacheExpiration.isUnlimited
      ? Number.POSITIVE_INFINITY
      : config.cacheExpiration.toMillis();
    let guarded: Handler | undefined;
    const registrations = new Registrations(configured, {
      discover: discoverIssuer,
      register: registerClient,
      allowHttp: !config.requireHttps,
      // The default handler goes only to public addresses: the client names the host. A handler the
      // configuration names is the operator's to restrict (departure 64).
      handler: async () => {
        if (config.discoveryHandler !== undefined) return config.discoveryHandler;
        guarded ??= publicAddressesOnly(await heap.get<Handler>('ClientHandler', 'handler'));
        return guarded;
      },
      metadata: config.metadata,
    });
    const ttlMs = config.cacheExpiration.isZero ? 0 : cacheMs;
    const userInfo = new UserInfoCache(ttlMs);
    const every = userInfoSweepInterval(ttlMs);
    if (every !== undefined) {
      const executor = await resolveExecutor(config.executor, heap);
      const sweeping = executor.scheduleWithFixedDelay(() => userInfo.sweep(), every, every);
      onDestroy(() => {
        sweeping.cancel();
        userInfo.clear();
      });
    }
    return new OAuth2ClientFilter({
      name,
      clientEndpoint: config.clientEndpoint,
      failureHandler: config.failureHandler,
      loginHandler: config.loginHandler,
      registrations,
      scopes: config.scopes,
      target: config.target ?? compileLValue(DEFAULT_TARGET),
      defaultLoginGoto: config.defaultLoginGoto,
      defaultLogoutGoto: config.defaultLogoutGoto,
      requireHttps: config.requireHttps,
      requireLogin: config.requireLogin,
      goto: new GotoPolicy(config.allowedGotoOrigins ?? [], config.requireHttps),
      userInfo,
      logger,
    });
  },
});
