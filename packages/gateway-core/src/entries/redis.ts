/** `@portico/gateway-core/redis`: the settings of a Redis connection, read as every plugin reads them. */
export {
  type RedisClientArguments,
  redisClientArguments,
  redisTimeout,
  redisUri,
} from '../config/redis-uri.ts';
