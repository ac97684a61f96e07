import { mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { type PorticoError, Request } from '@portico/gateway-core';
import { DEFAULT_SCRIPT_TIMEOUT_MS, MAX_GLOBALS } from '@portico/gateway-core/scripting';
import { resolveTokens, testContext } from '@portico/gateway-core/testing';
import { describe, expect, it } from 'vitest';
import type { BucketRate } from '../bucket/index.ts';
import { statuses, throttlingHeap } from '../fixtures/support.ts';
import type { ThrottlingFilter } from '../throttling-filter.ts';
import type { ThrottlingRatePolicy } from './policy.ts';

const minute = (n: number) => ({ numberOfRequests: n, duration: '1 minute' });
const asRate = (n: number, seconds = 60): BucketRate => ({ capacity: n, periodMicros: seconds * 1_000_000 });

function policyFrom(type: string, config: unknown, options: Parameters<typeof throttlingHeap>[1] = {}) {
  const { heap, logger, environment } = throttlingHeap([{ name: 'Policy', type, config }], options);
  return { policy: heap.get<ThrottlingRatePolicy>('Policy', 'object'), logger, environment, heap };
}

async function loadError(type: string, config: unknown, options: Parameters<typeof throttlingHeap>[1] = {}) {
  return policyFrom(type, config, options).policy.then(
    () => undefined,
    (error) => error,
  );
}

const request = (headers: Record<string, string> = {}) => new Request({ uri: 'http://app/items', headers });
const rateOf = (
  policy: ThrottlingRatePolicy,
  headers: Record<string, string> = {},
  context = testContext(),
) => Promise.resolve(policy.rateFor(context, request(headers)));

describe('MappedThrottlingPolicy', () => {
  const config = {
    throttlingRateMapper: "${request.headers['X-Tier'][0]}",
    throttlingRatesMapping: { gold: minute(100), silver: minute(10) },
    defaultRate: minute(1),
  };

  it('picks the rate mapped to the mapper result', async () => {
    const policy = await policyFrom('MappedThrottlingPolicy', config).policy;
    expect(await rateOf(policy, { 'X-Tier': 'gold' })).toEqual(asRate(100));
    expect(await rateOf(policy, { 'X-Tier': 'silver' })).toEqual(asRate(10));
  });

  it('uses the default rate for an unmapped result and for null', async () => {
    const policy = await policyFrom('MappedThrottlingPolicy', config).policy;
    expect(await rateOf(policy, { 'X-Tier': 'bronze' })).toEqual(asRate(1));
    expect(await rateOf(policy)).toEqual(asRate(1));
  });

  it('evaluates configuration-time expressions in the mapping keys once, at load', async () => {
    const policy = await policyFrom(
      'MappedThrottlingPolicy',
      { ...config, throttlingRatesMapping: { '${tier}': minute(7) } },
      { properties: { tier: 'platinum' } },
    ).policy;
    expect(await rateOf(policy, { 'X-Tier': 'platinum' })).toEqual(asRate(7));
  });

  it.each([
    [
      '${tier}${nothing}',
      {
        message: expect.stringContaining("'nothing' (column 10) is no name an expression knows here"),
        data: expect.objectContaining({
          object: 'Policy',
          file: 'routes/throttle.json',
          jsonPath: '$.heap[0].config.throttlingRatesMapping["${tier}${nothing}"]',
        }),
      },
    ],
    [
      '${tier}${tier.frobnicate()}',
      {
        message: 'expression evaluated to null',
        data: expect.objectContaining({
          object: 'Policy',
          file: 'routes/throttle.json',
          jsonPath: '$.heap[0].config.throttlingRatesMapping["${tier}${tier.frobnicate()}"]',
          problem: expect.stringContaining('frobnicate'),
        }),
      },
    ],
  ])(
    'warns of a part of the mapping key %s that is null, naming its object, file and JSON path',
    async (key, warning) => {
      const { policy, logger } = policyFrom(
        'MappedThrottlingPolicy',
        { ...config, throttlingRatesMapping: { [key]: minute(7) } },
        { properties: { tier: 'platinum' } },
      );
      expect(await rateOf(await policy, { 'X-Tier': 'platinum' })).toEqual(asRate(7));
      expect(logger.records.filter((r) => r.level === 'warn')).toEqual([
        expect.objectContaining({ level: 'warn', ...warning }),
      ]);
    },
  );

  it('refuses a mapping key whose result is no text, naming its file and JSON path', async () => {
    expect(
      await loadError(
        'MappedThrottlingPolicy',
        { ...config, throttlingRatesMapping: { '${tiers}': minute(7) } },
        { properties: { tiers: { gold: 1 } } },
      ),
    ).toMatchObject({
      code: 'PORTICO_E_CONFIG',
      details: {
        file: 'routes/throttle.json',
        jsonPath: '$.heap[0].config.throttlingRatesMapping["${tiers}"]',
        expected: 'a string',
      },
    });
  });

  it('accepts an empty mapping', async () => {
    const policy = await policyFrom('MappedThrottlingPolicy', { ...config, throttlingRatesMapping: {} })
      .policy;
    expect(await rateOf(policy, { 'X-Tier': 'gold' })).toEqual(asRate(1));
  });

  it.each([
    [{ ...config, throttlingRateMapper: undefined }, '$.heap[0].config.throttlingRateMapper'],
    [{ ...config, throttlingRatesMapping: undefined }, '$.heap[0].config.throttlingRatesMapping'],
    [{ ...config, throttlingRatesMapping: [] }, '$.heap[0].config.throttlingRatesMapping'],
    [
      { ...config, throttlingRatesMapping: { gold: { numberOfRequests: 0, duration: '1s' } } },
      '$.heap[0].config.throttlingRatesMapping.gold.numberOfRequests',
    ],
    [
      { ...config, throttlingRatesMapping: { 'gold tier': { numberOfRequests: 1 } } },
      '$.heap[0].config.throttlingRatesMapping["gold tier"].duration',
    ],
    [
      { ...config, throttlingRatesMapping: { '${missing}': minute(1) } },
      '$.heap[0].config.throttlingRatesMapping',
    ],
    [{ ...config, defaultRate: undefined }, '$.heap[0].config.defaultRate'],
    [
      { ...config, defaultRate: { numberOfRequests: 1, duration: 'unlimited' } },
      '$.heap[0].config.defaultRate.duration',
    ],
  ])('refuses a bad configuration (%#), naming %s', async (bad, jsonPath) => {
    expect(await loadError('MappedThrottlingPolicy', bad)).toMatchObject({
      code: 'PORTICO_E_CONFIG',
      details: { file: 'routes/throttle.json', jsonPath: expect.stringContaining(jsonPath) },
    });
  });
});

describe('MappedThrottlingPolicy settings from the environment', () => {
  it('are described, not quoted, in its problems', async () => {
    const config = resolveTokens(
      {
        throttlingRateMapper: "${request.headers['X-Tier'][0]}",
        throttlingRatesMapping: { gold: '&{tier.secret}', silver: { numberOfRequests: '&{tier.secret}' } },
        defaultRate: minute(1),
      },
      { env: { TIER_SECRET: 'hunter2-s3cr3t' } },
    );
    const error = (await loadError('MappedThrottlingPolicy', config)) as PorticoError;
    const problems = (error.details.cause as PorticoError[]).map(
      (p) => `${p.details.jsonPath}: ${p.message}`,
    );
    expect(problems).toEqual([
      '$.heap[0].config.throttlingRatesMapping.gold: the value of &{tier.secret} (14 characters, not shown) is not an object',
      '$.heap[0].config.throttlingRatesMapping.silver.numberOfRequests: the value of &{tier.secret} (14 characters, not shown) is not an integer of at least 1',
      '$.heap[0].config.throttlingRatesMapping.silver.duration: the setting is required',
    ]);
    expect(JSON.stringify(error)).not.toContain('hunter2');
  });
});

describe('DefaultRateThrottlingPolicy', () => {
  const script = (source: string) => ({
    type: 'ScriptableThrottlingPolicy',
    config: { type: 'application/javascript', source },
  });

  it("uses the delegate's rate", async () => {
    const policy = await policyFrom('DefaultRateThrottlingPolicy', {
      delegateThrottlingRatePolicy: script("return {numberOfRequests: 5, duration: '1 minute'};"),
      defaultRate: minute(2),
    }).policy;
    expect(await rateOf(policy)).toEqual(asRate(5));
  });

  it('uses the default rate when the delegate answers null', async () => {
    const policy = await policyFrom('DefaultRateThrottlingPolicy', {
      delegateThrottlingRatePolicy: script('return null;'),
      defaultRate: minute(2),
    }).policy;
    expect(await rateOf(policy)).toEqual(asRate(2));
  });

  it.each([
    [{ defaultRate: minute(2) }, '$.heap[0].config.delegateThrottlingRatePolicy'],
    [{ delegateThrottlingRatePolicy: script('return null;') }, '$.heap[0].config.defaultRate'],
  ])('refuses a configuration without a required setting (%#)', async (bad, jsonPath) => {
    expect(await loadError('DefaultRateThrottlingPolicy', bad)).toMatchObject({
      code: 'PORTICO_E_CONFIG',
      details: { jsonPath },
    });
  });

  it('refuses a delegate that is not a policy', async () => {
    expect(
      await loadError('DefaultRateThrottlingPolicy', {
        delegateThrottlingRatePolicy: { type: 'TemporaryStorage' },
        defaultRate: minute(2),
      }),
    ).toMatchObject({
      code: 'PORTICO_E_REFERENCE',
      details: { jsonPath: '$.heap[0].config.delegateThrottlingRatePolicy' },
    });
  });
});

describe('ScriptableThrottlingPolicy', () => {
  const js = (source: string, more: Record<string, unknown> = {}) => ({
    type: 'application/javascript',
    source,
    ...more,
  });

  it('asks a script given as source, which sees the request', async () => {
    const policy = await policyFrom(
      'ScriptableThrottlingPolicy',
      js(
        "return request.headers.get('X-Plan') === 'pro' ? {numberOfRequests: 50, duration: '1 minute'} : null;",
      ),
    ).policy;
    expect(await rateOf(policy, { 'X-Plan': 'pro' })).toEqual(asRate(50));
    expect(await rateOf(policy, { 'X-Plan': 'free' })).toBeNull();
  });

  it('runs a script file from a package-style directory under the scripts directory', async () => {
    const { heap, environment } = throttlingHeap([
      {
        name: 'Policy',
        type: 'ScriptableThrottlingPolicy',
        config: { type: 'application/javascript', file: 'com/example/rates.js' },
      },
    ]);
    mkdirSync(path.join(environment.scriptsDirectory, 'com/example'), { recursive: true });
    writeFileSync(
      path.join(environment.scriptsDirectory, 'com/example/rates.js'),
      "// by tenant\nconst tenant = request.uri.path.split('/')[1];\nreturn {numberOfRequests: tenant.length, duration: '10 seconds'};\n",
    );
    const policy = await heap.get<ThrottlingRatePolicy>('Policy', 'object');
    expect(await rateOf(policy)).toEqual(asRate('items'.length, 10));
  });

  it('gives the script contexts, attributes, args and globals kept between calls', async () => {
    const policy = await policyFrom(
      'ScriptableThrottlingPolicy',
      js(
        'globals.calls = (globals.calls || 0) + 1;' +
          'return {numberOfRequests: attributes.base * factor + globals.calls, duration: contexts.attributes ? period : "1 s"};',
        { args: { factor: 10, period: '1 minute' } },
      ),
    ).policy;
    const context = testContext({ attributes: { base: 2 } });
    expect(await rateOf(policy, {}, context)).toEqual(asRate(21));
    expect(await rateOf(policy, {}, context)).toEqual(asRate(22));
  });

  it(`keeps at most ${MAX_GLOBALS} entries in globals (a departure: the incumbents' globals has no bound)`, async () => {
    const { policy: pending, logger } = policyFrom(
      'ScriptableThrottlingPolicy',
      js(`const prefix = request.headers.get('X-Prefix');
        if (request.headers.get('X-Delete')) delete globals[request.headers.get('X-Delete')];
        for (let i = 0; i < Number(request.headers.get('X-Add')); i++) globals[prefix + i] = i;
        return { numberOfRequests: Object.keys(globals).length, duration: '1 minute' };`),
    );
    const policy = await pending;
    expect(await rateOf(policy, { 'X-Prefix': 'k', 'X-Add': String(MAX_GLOBALS) })).toEqual(
      asRate(MAX_GLOBALS),
    );
    // One more is refused: the run fails, is logged, and does not throttle.
    expect(await rateOf(policy, { 'X-Prefix': 'more', 'X-Add': '1' })).toBeNull();
    expect(logger.records.at(-1)).toMatchObject({
      level: 'error',
      message: expect.stringMatching(/script failed/),
      data: { error: expect.stringContaining(`globals holds ${MAX_GLOBALS} entries`) },
    });
    // Replacing a value is not adding one, and a deleted entry makes room.
    expect(await rateOf(policy, { 'X-Prefix': 'k', 'X-Add': '1' })).toEqual(asRate(MAX_GLOBALS));
    expect(await rateOf(policy, { 'X-Delete': 'k0', 'X-Prefix': 'more', 'X-Add': '1' })).toEqual(
      asRate(MAX_GLOBALS),
    );
  });

  it('reads the session only for scripts that name it', async () => {
    let loads = 0;
    const context = () =>
      testContext({
        session: () => {
          loads++;
          return { plan: 'pro' };
        },
      });
    const without = await policyFrom('ScriptableThrottlingPolicy', js('return null;')).policy;
    await rateOf(without, {}, context());
    expect(loads).toBe(0);
    const withSession = await policyFrom(
      'ScriptableThrottlingPolicy',
      js("return session.plan === 'pro' ? {numberOfRequests: 9, duration: '1 minute'} : null;"),
    ).policy;
    expect(await rateOf(withSession, {}, context())).toEqual(asRate(9));
    expect(loads).toBe(1);
  });

  it('awaits a script that answers with a promise', async () => {
    const policy = await policyFrom(
      'ScriptableThrottlingPolicy',
      js("return Promise.resolve({numberOfRequests: '3', duration: '1 minute'});"),
    ).policy;
    expect(await rateOf(policy)).toEqual(asRate(3));
  });

  it.each([
    ['throws', "throw new Error('lookup failed');", /script failed/],
    ['runs too long', 'for (;;) {}', /script failed/],
    ['throws null', 'throw null;', /script failed/],
    ['throws what cannot be printed', 'throw Object.create(null);', /script failed/],
    ['throws an object whose toString throws', 'throw { toString() { throw 1; } };', /script failed/],
    ['returns a Proxy', 'return new Proxy({}, {});', /script failed/],
    ['returns a bad duration', "return {numberOfRequests: 1, duration: 'soon'};", /no valid rate/],
    ['returns zero requests', "return {numberOfRequests: 0, duration: '1 s'};", /no valid rate/],
    ['returns something else', "return 'ten per second';", /no valid rate/],
  ])('logs a script that %s and does not throttle', async (_, source, message) => {
    const { policy, logger } = policyFrom('ScriptableThrottlingPolicy', js(source));
    expect(await rateOf(await policy)).toBeNull();
    expect(logger.records.some((r) => r.level === 'error' && message.test(r.message))).toBe(true);
  });

  it('stops a script that runs too long by its time bound, and logs which bound', async () => {
    // The bound is what stops it, however long that took on this machine: the log names it.
    const { policy, logger } = policyFrom('ScriptableThrottlingPolicy', js('for (;;) {}'));
    expect(await rateOf(await policy)).toBeNull();
    expect(logger.records).toContainEqual(
      expect.objectContaining({
        level: 'error',
        message: expect.stringMatching(/script failed/),
        data: expect.objectContaining({
          error: `Script execution timed out after ${DEFAULT_SCRIPT_TIMEOUT_MS}ms`,
        }),
      }),
    );
  });

  it('lets every request through a ThrottlingFilter when its script answers null', async () => {
    const { heap } = throttlingHeap([
      {
        name: 'Throttle',
        type: 'ThrottlingFilter',
        config: { throttlingRatePolicy: { type: 'ScriptableThrottlingPolicy', config: js('return null;') } },
      },
    ]);
    expect(await statuses(await heap.get<ThrottlingFilter>('Throttle', 'filter'), 5)).toEqual([
      200, 200, 200, 200, 200,
    ]);
  });

  it.each([
    [
      { type: 'application/x-groovy', file: 'rates.groovy' },
      '$.heap[0].config.type',
      /application\/javascript/,
    ],
    [{ type: 'application/javascript' }, '$.heap[0].config', /exactly one of file and source/],
    [
      { type: 'application/javascript', file: 'a.js', source: 'return null;' },
      '$.heap[0].config.source',
      /exclusive/,
    ],
    [{ file: 'a.js' }, '$.heap[0].config.type', /required/],
    [
      { type: 'application/javascript', file: 'missing/rates.js' },
      '$.heap[0].config.file',
      /cannot read the script/,
    ],
    [{ type: 'application/javascript', source: 'return {;' }, '$.heap[0].config.source', /does not compile/],
    [
      { type: 'application/javascript', source: 'return 1;', args: { request: 1 } },
      '$.heap[0].config.args.request',
      /hide/,
    ],
  ])('refuses %j at %s', async (bad, jsonPath, message) => {
    expect(await loadError('ScriptableThrottlingPolicy', bad)).toMatchObject({
      code: 'PORTICO_E_CONFIG',
      message: expect.stringMatching(message),
      details: { file: 'routes/throttle.json', jsonPath },
    });
  });
});
