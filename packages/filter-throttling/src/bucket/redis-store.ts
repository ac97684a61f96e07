import type { Redis } from 'ioredis';
import type { Clock } from './clock.ts';
import type { BucketRate } from './rate.ts';
import { type Consumption, checkSettlement, checkTokens, type SettlingBucketStore } from './store.ts';

/**
 * The start of both scripts: the arguments read, and the key's bucket (a full one when there is
 * none, or when it was made for another rate) refilled up to now, as arithmetic.ts `refill` does.
 */
const REFILL_LUA = `
local capacity = tonumber(ARGV[1])
local period = tonumber(ARGV[2])
local tokens = tonumber(ARGV[3])
local now
if ARGV[5] then
  now = tonumber(ARGV[5])
else
  local time = redis.call('TIME')
  now = tonumber(time[1]) * 1000000 + tonumber(time[2])
end
local full = capacity * period
local rate = ARGV[1] .. '/' .. ARGV[2]
local state = redis.call('HMGET', KEYS[1], 'l', 'a', 'r')
local level = full
local at = now
if state[3] == rate then
  level = tonumber(state[1])
  at = tonumber(state[2])
  local elapsed = now - at
  if elapsed > 0 then
    if elapsed >= period and level >= 0 then level = full else level = math.min(full, level + elapsed * capacity) end
    at = now
  end
end
`;

/**
 * One bucket update, atomic inside Redis, with Redis's own clock so that every gateway instance
 * reads the same time. The arithmetic is arithmetic.ts line for line (refill, then spend), on the
 * hash fields l (level), a (at) and r (the rate the bucket was made for; another rate replaces it).
 * Numbers are written with %.17g so that they read back exactly.
 *
 * KEYS[1] the bucket; ARGV capacity, periodMicros, tokens, time to live (ms), and optionally the time
 * in microseconds (a supplied clock, for tests and simulations) instead of Redis TIME.
 * Returns {admitted 0|1, remaining tokens, wait in microseconds (-1: never)}.
 */
export const TAKE_TOKENS_LUA = `${REFILL_LUA}local cost = tokens * period
if cost > full then
  return {0, math.floor(level / period), -1}
end
local admitted = 0
local wait = 0
if level >= cost then
  level = level - cost
  admitted = 1
else
  wait = math.ceil((cost - level) / capacity)
end
redis.call('HSET', KEYS[1], 'l', string.format('%.17g', level), 'a', string.format('%.17g', at), 'r', rate)
redis.call('PEXPIRE', KEYS[1], math.max(tonumber(ARGV[4]), math.ceil((full - level) / capacity / 1000) + 1))
return {admitted, math.floor(level / period), wait}
`;

/**
 * The settlement of a charge (memory-store's `settle`), atomic inside Redis: the bucket refilled as
 * in TAKE_TOKENS_LUA, then `tokens` more taken whatever it holds (a debt below zero) or `-tokens`
 * given back (never past full). A bucket in debt lives until it would be full again.
 *
 * KEYS[1] the bucket; ARGV capacity, periodMicros, tokens, time to live (ms) beyond the time to
 * full, and optionally the time in microseconds. Returns the whole tokens left.
 */
export const SETTLE_TOKENS_LUA = `${REFILL_LUA}if state[3] ~= rate and tokens <= 0 then
  return capacity
end
level = math.min(full, level - tokens * period)
redis.call('HSET', KEYS[1], 'l', string.format('%.17g', level), 'a', string.format('%.17g', at), 'r', rate)
redis.call('PEXPIRE', KEYS[1], math.ceil((full - level) / capacity / 1000) + tonumber(ARGV[4]))
return math.floor(level / period)
`;

const COMMAND = 'porticoTakeTokens';
const SETTLE_COMMAND = 'porticoSettleTokens';

type TakeTokens = (key: string, ...args: string[]) => Promise<[number, number, number]>;
type SettleTokens = (key: string, ...args: string[]) => Promise<number>;

/**
 * Token buckets in Redis, shared by every gateway instance using the same keys. Each bucket is one
 * hash that expires once idle for a whole period (when it would be full anyway), so Redis cleans up
 * by itself. Errors (Redis unreachable, a timeout) reject; what to do then is the caller's choice.
 */
export class RedisBucketStore implements SettlingBucketStore {
  readonly #take: TakeTokens;
  readonly #settle: SettleTokens;
  readonly #keyPrefix: string;
  readonly #clock: Clock | undefined;

  /**
   * `client` is an ioredis client the caller owns (and closes); `keyPrefix` goes before every key.
   * `clock` replaces Redis TIME, for deterministic tests only: Redis still expires keys on its own
   * clock, so with a clock the keys are kept a minute longer than their period.
   */
  constructor(options: { client: Redis; keyPrefix?: string; clock?: Clock }) {
    const client = options.client as Redis & Record<string, unknown>;
    if (typeof client[COMMAND] !== 'function')
      client.defineCommand(COMMAND, { numberOfKeys: 1, lua: TAKE_TOKENS_LUA });
    this.#take = (client[COMMAND] as TakeTokens).bind(client);
    if (typeof client[SETTLE_COMMAND] !== 'function')
      client.defineCommand(SETTLE_COMMAND, { numberOfKeys: 1, lua: SETTLE_TOKENS_LUA });
    this.#settle = (client[SETTLE_COMMAND] as SettleTokens).bind(client);
    this.#keyPrefix = options.keyPrefix ?? '';
    this.#clock = options.clock;
  }

  async consume(key: string, rate: BucketRate, tokens = 1): Promise<Consumption> {
    checkTokens(tokens);
    const ttlMillis = Math.ceil(rate.periodMicros / 1000) + (this.#clock ? 60_000 : 0);
    const args = [String(rate.capacity), String(rate.periodMicros), String(tokens), String(ttlMillis)];
    if (this.#clock) args.push(String(this.#clock()));
    const [admitted, remaining, wait] = await this.#take(this.#keyPrefix + key, ...args);
    return { admitted: admitted === 1, remaining, waitMicros: wait < 0 ? Infinity : wait };
  }

  async settle(key: string, rate: BucketRate, tokens: number): Promise<number> {
    checkSettlement(tokens);
    const margin = this.#clock ? 60_000 : 0;
    const args = [String(rate.capacity), String(rate.periodMicros), String(tokens), String(margin)];
    if (this.#clock) args.push(String(this.#clock()));
    return this.#settle(this.#keyPrefix + key, ...args);
  }
}
