export { parseConfigJson } from './json.ts';
export {
  checkConfig,
  childPath,
  type Infer,
  type ParseContext,
  type ParseOptions,
  parseConfig,
  Schema,
  s,
} from './schema.ts';
