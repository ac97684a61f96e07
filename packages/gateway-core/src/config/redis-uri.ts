import { Duration } from '../duration/index.ts';
import { fail, INVALID, type ParseContext, type Parsed } from './parse-context.ts';
import { Schema } from './schema.ts';
import { s } from './schema-builders.ts';
import { quoteSetting, writtenAt } from './secret-redaction.ts';

/** The default port of a Redis Sentinel. */
const SENTINEL_PORT = 26379;

/** What an ioredis client is made from: a URI, or the options of a Sentinel-managed group. */
export interface RedisClientArguments {
  /** For one server: the URI as given (`redis://`, `rediss://`). */
  uri?: string;
  /** For Sentinel: `sentinels`, `name` and the data nodes' credentials and database. */
  options: {
    sentinels?: { host: string; port: number }[];
    name?: string;
    username?: string;
    password?: string;
    sentinelPassword?: string;
    db?: number;
    /** Follow the Sentinels' `+switch-master` at once, not only when the old primary fails. */
    failoverDetector?: boolean;
  };
}

/**
 * Reads a Redis URI as settings give it: `redis://[user:password@]host:port[/db]` and `rediss://`
 * (one server), or `redis-sentinel://[[user:]password@]host[:port][,host[:port]...][/db]#group`
 * (the Sentinels of a replicated group; the group name may also be `?sentinelMasterId=group`, and
 * `?sentinelPassword=...` authenticates to Sentinels that require it). Throws an Error saying what
 * is wrong.
 */
export function redisClientArguments(text: string): RedisClientArguments {
  return readRedisUri(text, (quoted) => quoted);
}

/**
 * Names a part of the URI in a message: `quoted` shows it, `described` says which part it is
 * without showing it (for a URI from the environment, which may be a secret or hold one).
 */
type Part = (quoted: string, described: string) => string;

function readRedisUri(text: string, part: Part): RedisClientArguments {
  const scheme = /^([a-z][a-z0-9+.-]*):\/\//i.exec(text)?.[1]?.toLowerCase();
  if (scheme === 'redis' || scheme === 'rediss') return { uri: text, options: {} };
  if (scheme !== 'redis-sentinel') {
    throw new Error('expected redis://, rediss:// or redis-sentinel://');
  }
  // URL cannot parse several host:port pairs, so the authority is split here.
  const rest = text.slice('redis-sentinel://'.length);
  const hashAt = rest.indexOf('#');
  const fragment = hashAt >= 0 ? decodeURIComponent(rest.slice(hashAt + 1)) : '';
  const beforeFragment = hashAt >= 0 ? rest.slice(0, hashAt) : rest;
  const queryAt = beforeFragment.indexOf('?');
  const query = new URLSearchParams(queryAt >= 0 ? beforeFragment.slice(queryAt + 1) : '');
  const address = queryAt >= 0 ? beforeFragment.slice(0, queryAt) : beforeFragment;
  const slashAt = address.indexOf('/');
  const authority = slashAt >= 0 ? address.slice(0, slashAt) : address;
  const path = slashAt >= 0 ? address.slice(slashAt + 1) : '';
  const atAt = authority.lastIndexOf('@');
  const userInfo = atAt >= 0 ? authority.slice(0, atAt) : undefined;
  const hosts = atAt >= 0 ? authority.slice(atAt + 1) : authority;

  const sentinels = hosts.split(',').map((entry, i) => {
    const match = /^(\[[^\]]+\]|[^:[\]]+)(?::(\d{1,5}))?$/.exec(entry);
    if (!match) throw new Error(`${part(`'${entry}'`, `Sentinel host ${i + 1}`)} is not a host[:port]`);
    const port = match[2] === undefined ? SENTINEL_PORT : Number(match[2]);
    if (port < 1 || port > 65535)
      throw new Error(`${part(`port ${port}`, `the port of Sentinel host ${i + 1}`)} is out of range`);
    return { host: match[1]!.replace(/^\[|\]$/g, ''), port };
  });
  const name = fragment || query.get('sentinelMasterId') || '';
  if (name === '') throw new Error('the Sentinel group name is missing (#name or ?sentinelMasterId=name)');
  const options: RedisClientArguments['options'] = { sentinels, name, failoverDetector: true };
  if (userInfo !== undefined) {
    const colon = userInfo.indexOf(':');
    const username = colon >= 0 ? decodeURIComponent(userInfo.slice(0, colon)) : '';
    const password = decodeURIComponent(colon >= 0 ? userInfo.slice(colon + 1) : userInfo);
    if (username) options.username = username;
    if (password) options.password = password;
  }
  if (path !== '') {
    if (!/^\d+$/.test(path)) throw new Error(`${part(`'/${path}'`, 'the path')} is not a database number`);
    options.db = Number(path);
  }
  const sentinelPassword = query.get('sentinelPassword');
  if (sentinelPassword) options.sentinelPassword = sentinelPassword;
  return { options };
}

/**
 * A Redis URI setting, checked when the configuration loads (see `redisClientArguments`). A URI from
 * the environment is described, and so are the parts of it a problem names (a Sentinel host, a port,
 * the path): it often holds a password.
 */
export function redisUri(): Schema<string> {
  return new RedisUriSchema();
}

const TEXT = s.string();

class RedisUriSchema extends Schema<string> {
  readonly expected = 'redis://, rediss:// or redis-sentinel://host[:port][,host[:port]...][/db]#group';

  parseValue(value: unknown, path: string, ctx: ParseContext): Parsed<string> {
    const errors = ctx.errors.length;
    const text = TEXT.parseValue(value, path, ctx);
    if (text === INVALID || ctx.errors.length > errors) return text;
    const hidden = writtenAt(ctx, path) !== undefined;
    try {
      readRedisUri(text, (quoted, described) => (hidden ? described : quoted));
      return text;
    } catch (error) {
      const problem = (error as Error).message;
      const message = hidden ? `${quoteSetting(ctx, path, text)} is not a Redis URI: ${problem}` : problem;
      return fail(ctx, path, message, this.expected);
    }
  }

  jsonSchema() {
    return this.withDescription({ type: 'string' });
  }
}

/**
 * How long one Redis command may take before it fails (a Redis that stopped answering holds no
 * request longer): a finite duration above zero, 1 second unless set.
 */
export function redisTimeout(): Schema<Duration> {
  return s
    .duration()
    .refine(
      (timeout) =>
        timeout.isZero || timeout.isUnlimited ? 'the timeout must be finite and above zero' : undefined,
      'a duration above zero such as "500 ms"',
    )
    .default(() => Duration.parse('1 second'));
}
