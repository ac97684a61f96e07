import { ACCESS_TOPIC_SCHEMA, topicFields } from '@portico/gateway-core/audit';

/**
 * The columns of a topic's file are its schema's fields (`topicFields`): the leaves in declaration
 * order, in dot notation (`http.request.method`), an object without declared properties or an array
 * one column holding its JSON. These are the columns the incumbents' files have, so that tools
 * written for those files read ours.
 */

/** The columns of the access topic's core schema, in order. */
export const ACCESS_COLUMNS: readonly string[] = Object.freeze(topicFields(ACCESS_TOPIC_SCHEMA));

/** How to reach each column's value in an event: the path of keys, split once. */
export type ColumnPaths = readonly (readonly string[])[];

export function columnPaths(columns: readonly string[]): ColumnPaths {
  return columns.map((column) => column.split('.'));
}

/**
 * The values of one event's row, by column: text as it is; numbers and booleans as their text;
 * objects and arrays as compact JSON; absent, null and empty values as undefined (an empty cell).
 */
export function cellsOf(event: unknown, paths: ColumnPaths): (string | undefined)[] {
  const cells: (string | undefined)[] = new Array(paths.length);
  for (let c = 0; c < paths.length; c++) {
    const path = paths[c]!;
    let value: unknown = event;
    for (let k = 0; k < path.length && value != null; k++) {
      value = typeof value === 'object' ? (value as Record<string, unknown>)[path[k]!] : undefined;
    }
    cells[c] = textOf(value);
  }
  return cells;
}

/** A value's cell text, as `cellsOf` gives it. */
export function textOf(value: unknown): string | undefined {
  switch (typeof value) {
    case 'string':
      return value === '' ? undefined : value;
    case 'number':
      return Number.isFinite(value) ? String(value) : undefined;
    case 'boolean':
    case 'bigint':
      return String(value);
    case 'object': {
      if (value === null) return undefined;
      const json = JSON.stringify(value);
      return json === undefined || json === '' ? undefined : json;
    }
    default:
      return undefined;
  }
}
