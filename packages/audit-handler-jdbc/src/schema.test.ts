import { describe, expect, it } from 'vitest';
import { accessTableDdl, DEFAULT_FIELD_TO_COLUMN, SCHEMA_DATABASES } from './index.ts';

const COLUMNS = [
  'id',
  'timestamp_',
  'transactionid',
  'eventname',
  'userid',
  'trackingids',
  'server_ip',
  'server_port',
  'client_host',
  'client_ip',
  'client_port',
  'request_protocol',
  'request_operation',
  'request_detail',
  'http_request_secure',
  'http_request_method',
  'http_request_path',
  'http_request_queryparameters',
  'http_request_headers',
  'http_request_cookies',
  'http_response_headers',
  'response_status',
  'response_statuscode',
  'response_elapsedtime',
  'response_elapsedtimeunits',
];

describe('the default auditaccess table', () => {
  it.each(SCHEMA_DATABASES)('has every column, the key on id and two indexes for %s', (database) => {
    const ddl = accessTableDdl(database);
    const columns = [...ddl.matchAll(/^ {2}([a-z_]+) +[A-Z]/gm)].map((m) => m[1]);
    expect(columns).toEqual(COLUMNS);
    expect(ddl).toMatch(/^CREATE TABLE auditaccess \(/);
    expect(ddl).toContain('PRIMARY KEY (id)');
    expect(ddl).toContain('ON auditaccess (response_status);');
    expect(ddl).toContain('ON auditaccess (userid);');
  });

  it('uses each database’s types', () => {
    expect(accessTableDdl('mysql')).toMatch(/trackingids +MEDIUMTEXT,/);
    expect(accessTableDdl('mysql')).toMatch(/http_request_secure +BOOLEAN,/);
    expect(accessTableDdl('postgres')).toMatch(/trackingids +TEXT,/);
    expect(accessTableDdl('oracle')).toMatch(/id +VARCHAR2\(56\) NOT NULL,/);
    expect(accessTableDdl('oracle')).toMatch(/http_request_secure +NUMBER\(1\),/);
    expect(accessTableDdl('h2')).toMatch(/trackingids +CLOB,/);
    expect(accessTableDdl('postgres', 'audit_log')).toContain('CREATE TABLE audit_log (');
  });

  it('maps every access event field to its column, /a/b to a_b', () => {
    expect(Object.values(DEFAULT_FIELD_TO_COLUMN)).toEqual(COLUMNS);
    expect(DEFAULT_FIELD_TO_COLUMN['/http/request/queryParameters']).toBe('http_request_queryparameters');
  });
});
