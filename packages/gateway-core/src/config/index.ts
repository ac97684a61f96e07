export { charsetSetting } from './charset-setting.ts';
export { parseConfigJson } from './json.ts';
export { type RedisClientArguments, redisClientArguments, redisUri } from './redis-uri.ts';
export {
  checkConfig,
  childPath,
  INVALID,
  type Infer,
  type ParseContext,
  type ParseOptions,
  parseConfig,
  Reference,
  type ReferenceKind,
  Schema,
  s,
} from './schema.ts';
export { resolveTokens, tokenEnvironmentName } from './tokens.ts';
