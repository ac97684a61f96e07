import { describe, expect, it } from 'vitest';
import { parseJdbcUrl } from './jdbc-url.ts';

describe('parseJdbcUrl', () => {
  it('reads a PostgreSQL URL with its driver properties', () => {
    expect(parseJdbcUrl('jdbc:postgresql://db.example:6543/app?sslmode=require&ApplicationName=gw')).toEqual({
      dialect: 'postgresql',
      host: 'db.example',
      port: 6543,
      database: 'app',
      user: undefined,
      password: undefined,
      properties: { sslmode: 'require', ApplicationName: 'gw' },
    });
  });

  it('gives each database its default port and localhost as the default host', () => {
    expect(parseJdbcUrl('jdbc:postgresql:///app')).toMatchObject({ host: 'localhost', port: 5432 });
    expect(parseJdbcUrl('jdbc:mysql://db/app')).toMatchObject({ dialect: 'mysql', port: 3306 });
    expect(parseJdbcUrl('jdbc:mariadb://db/app')).toMatchObject({ dialect: 'mysql', port: 3306 });
  });

  it('accepts driver URLs without the jdbc: prefix, with credentials in them', () => {
    expect(parseJdbcUrl('postgres://al%40ce:p%3Ass@127.0.0.1:15432/portico')).toMatchObject({
      dialect: 'postgresql',
      user: 'al@ce',
      password: 'p:ss',
      database: 'portico',
    });
    expect(parseJdbcUrl('mysql://u:p@h:1/d')).toMatchObject({ dialect: 'mysql', user: 'u', password: 'p' });
  });

  it('reads IPv6 hosts and URLs without a database', () => {
    expect(parseJdbcUrl('jdbc:postgresql://[::1]:5433')).toMatchObject({
      host: '::1',
      port: 5433,
      database: undefined,
    });
  });

  it('says what is wrong with a URL it cannot use', () => {
    expect(parseJdbcUrl('db.example:5432')).toMatch(/is not a JDBC URL/);
    expect(parseJdbcUrl('jdbc:oracle://db:1521/orcl')).toMatch(/'oracle' is not supported/);
    expect(parseJdbcUrl('jdbc:postgresql://a:5432,b:5432/app')).toMatch(/several hosts/);
    expect(parseJdbcUrl('jdbc:mysql://db:99999/app')).toMatch(/not a valid URL/);
    expect(parseJdbcUrl('jdbc:mysql://db/app/extra')).toMatch(/not a database name/);
  });
});
