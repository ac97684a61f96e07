import type { AuditEvent } from '@portico/gateway-core/audit';

/** The field under which a document keeps the keys its dots were taken out of. */
export const NORMALIZED = '_normalized';

/** A document as it is indexed: the event without `_id`, no dot in any key. */
export type SearchDocument = Record<string, unknown>;

/**
 * The document an event is indexed as: the event without its `_id` (which becomes the document's
 * id, so writing it again replaces it), every key holding a `.` renamed with `_` in its place (a
 * dot in a key would be read by the engine as an object path), and, when a key was renamed,
 * `_normalized.fieldNames` mapping the JSON pointer of each renamed key to the key as it was, so
 * that `restoreEvent` gives the event back unchanged.
 */
export function toDocument(event: AuditEvent): SearchDocument {
  const renamed: Record<string, string> = {};
  const document = normalize(event, '', renamed, true) as SearchDocument;
  if (Object.keys(renamed).length > 0) document[NORMALIZED] = { fieldNames: renamed };
  return document;
}

function normalize(value: unknown, pointer: string, renamed: Record<string, string>, top = false): unknown {
  if (Array.isArray(value)) return value.map((item, i) => normalize(item, `${pointer}/${i}`, renamed));
  if (typeof value !== 'object' || value === null) return value;
  const out: Record<string, unknown> = {};
  for (const [key, child] of Object.entries(value)) {
    if (top && key === '_id') continue;
    const name = key.includes('.') ? key.replaceAll('.', '_') : key;
    const at = `${pointer}/${escapePointer(name)}`;
    if (name !== key) renamed[at] = key;
    out[name] = normalize(child, at, renamed);
  }
  return out;
}

/** The event a stored document stands for: its id as `_id`, first, and its keys as they were. */
export function restoreEvent(id: string, document: SearchDocument): AuditEvent {
  const { [NORMALIZED]: normalized, ...rest } = document;
  const names = (normalized as { fieldNames?: Record<string, string> } | undefined)?.fieldNames ?? {};
  const restored = Object.keys(names).length === 0 ? rest : (restore(rest, '', names) as SearchDocument);
  return { _id: id, ...restored } as AuditEvent;
}

function restore(value: unknown, pointer: string, names: Record<string, string>): unknown {
  if (Array.isArray(value)) return value.map((item, i) => restore(item, `${pointer}/${i}`, names));
  if (typeof value !== 'object' || value === null) return value;
  const out: Record<string, unknown> = {};
  for (const [key, child] of Object.entries(value)) {
    const at = `${pointer}/${escapePointer(key)}`;
    out[names[at] ?? key] = restore(child, at, names);
  }
  return out;
}

function escapePointer(key: string): string {
  return key.replaceAll('~', '~0').replaceAll('/', '~1');
}
