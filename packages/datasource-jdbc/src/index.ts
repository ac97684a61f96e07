import { definePlugin } from '@portico/gateway-core';
import pkg from '../package.json' with { type: 'json' };
import { JdbcDataSourceHeaplet } from './jdbc-data-source.ts';

export type { PoolSettings, Row } from './driver-pool.ts';
export {
  isSqlDataSource,
  JdbcDataSource,
  type JdbcDataSourceConfig,
  JdbcDataSourceHeaplet,
  jdbcDataSourceConfig,
  POOL_DEFAULTS,
  type SqlDataSource,
} from './jdbc-data-source.ts';
export { type Dialect, type JdbcTarget, parseJdbcUrl } from './jdbc-url.ts';
export { candidateNames, JNDI_PREFIX, lookupDataSource } from './lookup.ts';
export { countPlaceholders, numberPlaceholders } from './placeholders.ts';

/** The plugin manifest: the JdbcDataSource heap object type. */
export default definePlugin({
  name: pkg.name,
  version: pkg.version,
  heaplets: [JdbcDataSourceHeaplet],
});
