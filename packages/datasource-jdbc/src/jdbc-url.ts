/** The database families Portico has a driver for. */
export type Dialect = 'postgresql' | 'mysql';

/** What a JDBC URL says: where the database is, and the driver properties written in its query. */
export interface JdbcTarget {
  dialect: Dialect;
  host: string;
  port: number;
  database: string | undefined;
  user: string | undefined;
  password: string | undefined;
  /** Driver properties from the query string (`?sslmode=require&ApplicationName=x`), as written. */
  properties: Record<string, string>;
}

/** The URL schemes accepted, with and without the `jdbc:` prefix Java configurations carry. */
const SCHEMES: Record<string, { dialect: Dialect; port: number }> = {
  postgresql: { dialect: 'postgresql', port: 5432 },
  postgres: { dialect: 'postgresql', port: 5432 },
  mysql: { dialect: 'mysql', port: 3306 },
  mariadb: { dialect: 'mysql', port: 3306 },
};

export const JDBC_URL_EXPECTED =
  'a URL such as jdbc:postgresql://host:5432/db, jdbc:mysql://host:3306/db or jdbc:mariadb://host/db';

/**
 * Reads `jdbc:postgresql://host:port/db?prop=value`, `jdbc:mysql://...` and `jdbc:mariadb://...`
 * (the `jdbc:` prefix is optional, so driver URLs such as `postgres://user:pw@host/db` work too).
 * Returns what is wrong with the URL as a string when it cannot be used.
 */
export function parseJdbcUrl(text: string): JdbcTarget | string {
  const match = /^(?:jdbc:)?([a-z]+):\/\/([^/?#]*)(.*)$/i.exec(text.trim());
  if (!match) return `'${text}' is not a JDBC URL`;
  const scheme = SCHEMES[match[1]!.toLowerCase()];
  if (!scheme) return `the database '${match[1]}' is not supported (PostgreSQL, MySQL and MariaDB are)`;
  const authority = match[2]!;
  // Failover lists (`host1,host2`) and replication variants need driver features we do not have.
  if (authority.includes(',')) return 'several hosts in one URL are not supported';
  let url: URL;
  try {
    url = new URL(`portico://${authority}${match[3]}`);
  } catch {
    return `'${text}' is not a valid URL`;
  }
  const properties: Record<string, string> = {};
  for (const [key, value] of url.searchParams) properties[key] = value;
  const path = decodeURIComponent(url.pathname.replace(/^\//, ''));
  if (path.includes('/')) return `'${path}' is not a database name`;
  return {
    dialect: scheme.dialect,
    host: url.hostname.replace(/^\[|\]$/g, '') || 'localhost',
    port: url.port ? Number(url.port) : scheme.port,
    database: path || undefined,
    user: url.username ? decodeURIComponent(url.username) : undefined,
    password: url.password ? decodeURIComponent(url.password) : undefined,
    properties,
  };
}
