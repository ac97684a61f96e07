import type { QueryFilter, QueryValue } from '@portico/gateway-core/audit';

/** A query of the engine's query language, as a JSON object. */
export type EngineQuery = Record<string, unknown>;

/**
 * The engine query that selects what a parsed `_queryFilter` matches, or a superset of it (the
 * handler checks each hit with `matchesQueryFilter` as well): pointers become dotted field paths
 * (keys renamed as documents rename them), strings are compared on the `.keyword` sub-field that the
 * engine's dynamic mapping gives text (and on the field itself for `timestamp`, mapped as a date),
 * numbers and booleans on the field.
 */
export function toEngineQuery(filter: QueryFilter): EngineQuery {
  switch (filter.op) {
    case 'true':
      return { match_all: {} };
    case 'false':
      return { match_none: {} };
    case 'and':
      return { bool: { filter: filter.operands.map(toEngineQuery) } };
    case 'or':
      return { bool: { should: filter.operands.map(toEngineQuery), minimum_should_match: 1 } };
    case 'not':
      return { bool: { must_not: [toEngineQuery(filter.operand)] } };
    case 'pr':
      return { exists: { field: fieldPath(filter.field) } };
    default:
      return comparison(filter.op, fieldPath(filter.field), filter.value);
  }
}

function comparison(op: string, field: string, value: QueryValue): EngineQuery {
  if (value === null)
    return op === 'eq' ? { bool: { must_not: [{ exists: { field } }] } } : { match_none: {} };
  const onText = typeof value === 'string' && field !== 'timestamp';
  const target = onText ? `${field}.keyword` : field;
  switch (op) {
    case 'eq':
      return { term: { [target]: value } };
    case 'co':
      return typeof value === 'string'
        ? { wildcard: { [target]: { value: `*${escapeWildcard(value)}*` } } }
        : { match_none: {} };
    case 'sw':
      return typeof value === 'string' ? { prefix: { [target]: value } } : { match_none: {} };
    default: {
      if (typeof value === 'boolean') return { match_none: {} };
      const bound = op === 'gt' ? 'gt' : op === 'ge' ? 'gte' : op === 'lt' ? 'lt' : 'lte';
      return { range: { [target]: { [bound]: value } } };
    }
  }
}

/** `/http/request/path` → `http.request.path`; a dot in a key is a `_` in the document. */
export function fieldPath(pointer: string): string {
  return pointer
    .slice(1)
    .split('/')
    .map((part) => part.replaceAll('~1', '/').replaceAll('~0', '~').replaceAll('.', '_'))
    .join('.');
}

function escapeWildcard(text: string): string {
  return text.replace(/[\\*?]/g, (c) => `\\${c}`);
}
