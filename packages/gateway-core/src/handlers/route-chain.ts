import { isRecord } from '../is-record.ts';

/**
 * What a route's requests go through, from its `handler` as written: a Chain's (or
 * ChainOfFilters') filters then its handler, each by name (or type, for an inline object); another
 * handler alone. Read once when the route loads, for operators (the router API, the routes page).
 */
export function chainOf(handler: unknown): string[] {
  if (isRecord(handler) && (handler.type === 'Chain' || handler.type === 'ChainOfFilters')) {
    const config = isRecord(handler.config) ? handler.config : {};
    const filters = Array.isArray(config.filters) ? config.filters : [];
    return [...filters.map(labelOf), labelOf(config.handler)];
  }
  return [labelOf(handler)];
}

/** A heap reference's name, an inline object's name or type. */
function labelOf(value: unknown): string {
  if (typeof value === 'string') return value;
  if (isRecord(value)) return String(value.name ?? value.type ?? '?');
  return '?';
}
