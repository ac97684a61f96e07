import type { AuditEvent, JsonSchema, QueryFilter } from '@portico/gateway-core/audit';
import { pointerValue } from '@portico/gateway-core/audit';

/** The SQL the pool speaks: the database of the JDBC URL. */
export type SqlDialect = 'postgresql' | 'mysql';

/**
 * A table or column name as configured: letters, digits, `_` and `$`, not starting with a digit,
 * optionally qualified by a schema (`audit.auditaccess`). Names are written into statements
 * unquoted, so they fold case as the database folds them, as the incumbents' statements do.
 */
const IDENTIFIER = /^[A-Za-z_][A-Za-z0-9_$]{0,62}(\.[A-Za-z_][A-Za-z0-9_$]{0,62})?$/;

export function identifierProblem(name: string): string | undefined {
  return IDENTIFIER.test(name)
    ? undefined
    : `'${name}' is not a table or column name (letters, digits, _ and $, not starting with a digit)`;
}

/** A mapping's JSON pointer with its leading `/` (the incumbents accept either form). */
export function normalizePointer(field: string): string {
  return field.startsWith('/') ? field : `/${field}`;
}

/** One table an event topic is written to: its columns and the event field each takes. */
export interface TableMapping {
  readonly table: string;
  /** Columns in the order of the configuration, each with the JSON pointer of its field. */
  readonly columns: readonly { readonly column: string; readonly field: string }[];
}

/** A value as a column takes it: absent is NULL, objects and arrays are JSON text. */
export function columnValue(value: unknown): unknown {
  if (value === undefined || value === null) return null;
  if (typeof value === 'object') return JSON.stringify(value);
  return value;
}

/** The values of `events` for the columns of `mapping`, row after row. */
export function rowValues(mapping: TableMapping, events: readonly AuditEvent[]): unknown[] {
  const values: unknown[] = [];
  for (const event of events)
    for (const { field } of mapping.columns) values.push(columnValue(pointerValue(event, field)));
  return values;
}

/**
 * A multi-row INSERT of `rows` rows with `?` placeholders that skips the rows whose key is there
 * already (PostgreSQL `ON CONFLICT DO NOTHING`, MySQL/MariaDB `INSERT IGNORE`): a batch written
 * again after a failure adds no duplicate when the table has its primary key on the `_id` column.
 */
export function insertStatement(dialect: SqlDialect, mapping: TableMapping, rows: number): string {
  const columns = mapping.columns.map((c) => c.column).join(', ');
  const row = `(${mapping.columns.map(() => '?').join(', ')})`;
  const values = Array.from({ length: rows }, () => row).join(', ');
  return dialect === 'postgresql'
    ? `INSERT INTO ${mapping.table} (${columns}) VALUES ${values} ON CONFLICT DO NOTHING`
    : `INSERT IGNORE INTO ${mapping.table} (${columns}) VALUES ${values}`;
}

/** PostgreSQL takes at most 65535 bound parameters in one statement; stay clear of it. */
const MAX_PARAMETERS = 60_000;

/** The most rows one INSERT of `mapping` may carry, `wanted` at most. */
export function rowsPerStatement(mapping: TableMapping, wanted: number): number {
  return Math.max(1, Math.min(wanted, Math.floor(MAX_PARAMETERS / Math.max(1, mapping.columns.length))));
}

/** A WHERE condition with `?` placeholders and its bound values. */
export interface SqlCondition {
  readonly sql: string;
  readonly params: readonly unknown[];
}

/**
 * A parsed query filter as a WHERE condition on the mapped columns, every value bound. A field no
 * column holds matches nothing (`pr` included). Each comparison is false, never NULL, on a NULL
 * column, so that `!` negates as the filter means it.
 */
export function whereCondition(filter: QueryFilter, mapping: TableMapping): SqlCondition {
  const params: unknown[] = [];
  const columnOf = new Map(mapping.columns.map((c) => [c.field, c.column]));
  const walk = (f: QueryFilter): string => {
    switch (f.op) {
      case 'true':
        return '1 = 1';
      case 'false':
        return '1 = 0';
      case 'and':
      case 'or':
        return `(${f.operands.map(walk).join(f.op === 'and' ? ' AND ' : ' OR ')})`;
      case 'not':
        return `NOT (${walk(f.operand)})`;
      case 'pr': {
        const column = columnOf.get(f.field);
        return column === undefined ? '1 = 0' : `${column} IS NOT NULL`;
      }
      default: {
        const column = columnOf.get(f.field);
        if (column === undefined) return '1 = 0';
        if (f.value === null) return f.op === 'eq' ? `${column} IS NULL` : '1 = 0';
        if (f.op === 'co' || f.op === 'sw') {
          if (typeof f.value !== 'string') return '1 = 0';
          params.push(`${f.op === 'co' ? '%' : ''}${escapeLike(f.value)}%`);
          return `(${column} IS NOT NULL AND ${column} LIKE ?)`;
        }
        params.push(f.value);
        const operator = { eq: '=', gt: '>', ge: '>=', lt: '<', le: '<=' }[f.op];
        return `(${column} IS NOT NULL AND ${column} ${operator} ?)`;
      }
    }
  };
  return { sql: walk(filter), params };
}

function escapeLike(text: string): string {
  return text.replace(/[\\%_]/g, (c) => `\\${c}`);
}

/**
 * A SELECT of the mapped columns matching `condition`, oldest first when the timestamp (and the
 * `_id`) are mapped, at most `limit` rows.
 */
export function selectStatement(mapping: TableMapping, condition: SqlCondition, limit: number): SqlCondition {
  const columns = mapping.columns.map((c) => c.column).join(', ');
  const order = ['/timestamp', '/_id']
    .map((field) => mapping.columns.find((c) => c.field === field)?.column)
    .filter((c): c is string => c !== undefined);
  return {
    sql: `SELECT ${columns} FROM ${mapping.table} WHERE ${condition.sql}${
      order.length > 0 ? ` ORDER BY ${order.join(', ')}` : ''
    } LIMIT ?`,
    params: [...condition.params, limit],
  };
}

/**
 * An event made from a row read back: each column's value at its field, converted to the type the
 * topic's schema gives the field (JSON text to objects and arrays, text to numbers and booleans);
 * NULL columns are left out.
 */
export function eventFromRow(
  row: Record<string, unknown>,
  mapping: TableMapping,
  schema: JsonSchema,
): AuditEvent {
  const event: Record<string, unknown> = {};
  for (const { column, field } of mapping.columns) {
    const value = row[column] ?? row[column.toLowerCase()] ?? row[column.toUpperCase()];
    if (value === null || value === undefined) continue;
    setPointer(event, field, fromColumn(value, schemaTypeAt(schema, field)));
  }
  return event as unknown as AuditEvent;
}

function fromColumn(value: unknown, type: string | undefined): unknown {
  if (Buffer.isBuffer(value)) value = value.toString('utf8');
  if (value instanceof Date) value = value.toISOString();
  switch (type) {
    case 'object':
    case 'array':
      if (typeof value !== 'string') return value;
      try {
        return JSON.parse(value);
      } catch {
        return value;
      }
    case 'integer':
    case 'number': {
      const n = Number(value);
      return Number.isFinite(n) ? n : value;
    }
    case 'boolean':
      return value === true || value === 1 || value === '1' || value === 'true' || value === 't';
    case 'string':
      return typeof value === 'string' ? value : String(value);
    default:
      return value;
  }
}

/** The `type` the schema gives the field a pointer names, or undefined. */
export function schemaTypeAt(schema: JsonSchema, pointer: string): string | undefined {
  let current: JsonSchema | undefined = schema;
  for (const raw of pointer.slice(1).split('/')) {
    const key = raw.replaceAll('~1', '/').replaceAll('~0', '~');
    const properties = current?.properties as Record<string, JsonSchema> | undefined;
    current = properties?.[key];
    if (current === undefined) return undefined;
  }
  const type = current?.type;
  return typeof type === 'string'
    ? type
    : Array.isArray(type)
      ? (type.find((t) => t !== 'null') as string)
      : undefined;
}

function setPointer(target: Record<string, unknown>, pointer: string, value: unknown): void {
  const keys = pointer
    .slice(1)
    .split('/')
    .map((k) => k.replaceAll('~1', '/').replaceAll('~0', '~'));
  let current = target;
  for (const key of keys.slice(0, -1)) {
    const next = current[key];
    if (typeof next !== 'object' || next === null) current[key] = {};
    current = current[key] as Record<string, unknown>;
  }
  current[keys[keys.length - 1]!] = value;
}
