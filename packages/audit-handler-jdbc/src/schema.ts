/** The databases `portico audit schema` writes the default table for. */
export const SCHEMA_DATABASES = ['postgres', 'mysql', 'oracle', 'h2'] as const;
export type SchemaDatabase = (typeof SCHEMA_DATABASES)[number];

/** The default table of access events, as the incumbents' scripts create it. */
export const DEFAULT_ACCESS_TABLE = 'auditaccess';

type ColumnKind = 'id' | 'short' | 'port' | 'method' | 'status' | 'name' | 'text' | 'boolean';

/** Each column of the default table: its name, the access event field it holds, what it holds. */
const COLUMNS: readonly (readonly [column: string, field: string, kind: ColumnKind])[] = [
  ['id', '/_id', 'id'],
  ['timestamp_', '/timestamp', 'short'],
  ['transactionid', '/transactionId', 'name'],
  ['eventname', '/eventName', 'name'],
  ['userid', '/userId', 'name'],
  ['trackingids', '/trackingIds', 'text'],
  ['server_ip', '/server/ip', 'name'],
  ['server_port', '/server/port', 'port'],
  ['client_host', '/client/host', 'name'],
  ['client_ip', '/client/ip', 'name'],
  ['client_port', '/client/port', 'port'],
  ['request_protocol', '/request/protocol', 'name'],
  ['request_operation', '/request/operation', 'name'],
  ['request_detail', '/request/detail', 'text'],
  ['http_request_secure', '/http/request/secure', 'boolean'],
  ['http_request_method', '/http/request/method', 'method'],
  ['http_request_path', '/http/request/path', 'text'],
  ['http_request_queryparameters', '/http/request/queryParameters', 'text'],
  ['http_request_headers', '/http/request/headers', 'text'],
  ['http_request_cookies', '/http/request/cookies', 'text'],
  ['http_response_headers', '/http/response/headers', 'text'],
  ['response_status', '/response/status', 'status'],
  ['response_statuscode', '/response/statusCode', 'name'],
  ['response_elapsedtime', '/response/elapsedTime', 'name'],
  ['response_elapsedtimeunits', '/response/elapsedTimeUnits', 'name'],
];

/**
 * The `fieldToColumn` of a `tableMappings` entry that fills the default table: every access event
 * field to its column (`/a/b` to `a_b`, lower case, `timestamp` to `timestamp_`).
 */
export const DEFAULT_FIELD_TO_COLUMN: Readonly<Record<string, string>> = Object.freeze(
  Object.fromEntries(COLUMNS.map(([column, field]) => [field, column])),
);

/** The column types of PostgreSQL; the others differ only where they say. */
const STANDARD: Record<ColumnKind, string> = {
  id: 'VARCHAR(56) NOT NULL',
  short: 'VARCHAR(29)',
  port: 'VARCHAR(5)',
  method: 'VARCHAR(7)',
  status: 'VARCHAR(10)',
  name: 'VARCHAR(255)',
  text: 'TEXT',
  boolean: 'BOOLEAN',
};

const TYPES: Record<SchemaDatabase, Record<ColumnKind, string>> = {
  postgres: STANDARD,
  mysql: { ...STANDARD, text: 'MEDIUMTEXT' },
  h2: { ...STANDARD, text: 'CLOB' },
  oracle: Object.fromEntries(
    Object.entries({ ...STANDARD, text: 'CLOB', boolean: 'NUMBER(1)' }).map(([kind, type]) => [
      kind,
      type.replace('VARCHAR(', 'VARCHAR2('),
    ]),
  ) as Record<ColumnKind, string>,
};

/**
 * The statements that create the default access table for `database`, with its primary key on `id`
 * and its indexes on `response_status` and `userid`, ending each with `;`. `table` renames it.
 */
export function accessTableDdl(database: SchemaDatabase, table: string = DEFAULT_ACCESS_TABLE): string {
  const types = TYPES[database];
  const width = Math.max(...COLUMNS.map(([column]) => column.length));
  const lines = COLUMNS.map(([column, , kind]) => `  ${column.padEnd(width)} ${types[kind]},`);
  return [
    `CREATE TABLE ${table} (`,
    ...lines,
    `  PRIMARY KEY (id)`,
    ');',
    `CREATE INDEX idx_${table}_status ON ${table} (response_status);`,
    `CREATE INDEX idx_${table}_principal ON ${table} (userid);`,
    '',
  ].join('\n');
}
