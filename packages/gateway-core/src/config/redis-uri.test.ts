import { describe, expect, it } from 'vitest';
import { checkConfig } from './parse-config.ts';
import { redisClientArguments, redisUri } from './redis-uri.ts';
import { s } from './schema-builders.ts';
import { resolveTokens } from './tokens.ts';

describe('redisClientArguments', () => {
  it('hands redis:// and rediss:// URIs to the client as they are', () => {
    expect(redisClientArguments('redis://:pw@cache:6380/2')).toEqual({
      uri: 'redis://:pw@cache:6380/2',
      options: {},
    });
    expect(redisClientArguments('rediss://cache.example.com')).toEqual({
      uri: 'rediss://cache.example.com',
      options: {},
    });
  });

  it('reads the Sentinels, the group, the credentials and the database of redis-sentinel://', () => {
    expect(redisClientArguments('redis-sentinel://app:s%40cret@s1:26380,s2,[::1]:26381/3#orders')).toEqual({
      options: {
        sentinels: [
          { host: 's1', port: 26380 },
          { host: 's2', port: 26379 },
          { host: '::1', port: 26381 },
        ],
        name: 'orders',
        username: 'app',
        password: 's@cret',
        db: 3,
        failoverDetector: true,
      },
    });
    expect(
      redisClientArguments('redis-sentinel://:pw@s1?sentinelMasterId=main&sentinelPassword=sp').options,
    ).toEqual({
      sentinels: [{ host: 's1', port: 26379 }],
      name: 'main',
      password: 'pw',
      sentinelPassword: 'sp',
      failoverDetector: true,
    });
  });

  it.each([
    ['http://cache:6379', 'expected redis://, rediss:// or redis-sentinel://'],
    ['cache:6379', 'expected redis://, rediss:// or redis-sentinel://'],
    ['redis-sentinel://s1:26379', 'the Sentinel group name is missing'],
    ['redis-sentinel://s1:99999#g', 'port 99999 is out of range'],
    ['redis-sentinel://s1,,s2#g', "'' is not a host[:port]"],
    ['redis-sentinel://s1/x#g', "'/x' is not a database number"],
  ])('refuses %s', (text, message) => {
    expect(() => redisClientArguments(text)).toThrow(message);
  });

  it('names no part of a URI from the environment: a host, a port, a path may hold a secret', () => {
    process.env.PORTICO_REDIS_SECRET = 'redis-sentinel://s1,hunter2:s3cr3t#g';
    const env = {
      env: {
        REDIS_PORT: 'redis-sentinel://app:hunter2@s1:99999#g',
        REDIS_PATH: 'redis-sentinel://s1/hunter2#g',
        REDIS_OK: 'redis-sentinel://app:hunter2@s1#g',
      },
    };
    const config = resolveTokens(
      { a: "${env['PORTICO_REDIS_SECRET']}", b: '&{redis.port}', c: '&{redis.path}', d: '&{redis.ok}' },
      env,
    );
    const schema = s.object({ a: redisUri(), b: redisUri(), c: redisUri(), d: redisUri() });
    const { errors } = checkConfig(schema, config);
    expect(errors.map((e) => `${e.details.jsonPath}: ${e.message}`)).toEqual([
      "$.a: the value of ${env['PORTICO_REDIS_SECRET']} (36 characters, not shown) is not a Redis URI: Sentinel host 2 is not a host[:port]",
      '$.b: the value of &{redis.port} (39 characters, not shown) is not a Redis URI: the port of Sentinel host 1 is out of range',
      '$.c: the value of &{redis.path} (29 characters, not shown) is not a Redis URI: the path is not a database number',
    ]);
    expect(checkConfig(redisUri(), 'redis-sentinel://s1,bad:host#g').errors[0]?.message).toBe(
      "'bad:host' is not a host[:port]",
    );
  });

  it('is checked when the configuration loads, at the setting', () => {
    const { errors } = checkConfig(redisUri(), 'redis-sentinel://s1');
    expect(errors[0]).toMatchObject({
      code: 'PORTICO_E_CONFIG',
      message: expect.stringContaining('group name'),
    });
  });
});
