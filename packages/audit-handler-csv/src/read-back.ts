import { existsSync, readFileSync } from 'node:fs';
import type { AuditEvent, JsonSchema } from '@portico/gateway-core/audit';
import { type CsvFormat, parseCsv } from './csv-format.ts';
import { isTamperEvidentHeader } from './verify.ts';

/**
 * Events read back from a CSV file, for `handlerForQueries`: each row becomes the event it was
 * written from, its dot-notation columns nested again, values typed by the topic's schema (integers
 * and numbers, booleans, objects and arrays from their JSON, text as it is). Signature rows and the
 * HMAC and SIGNATURE columns of a tamper-evident file are left out. A row that cannot be read is
 * skipped: a query answers with what the file holds.
 */
export function readEvents(file: string, schema: JsonSchema, format: CsvFormat): AuditEvent[] {
  if (!existsSync(file)) return [];
  let rows: (string | undefined)[][];
  try {
    const parsed = parseCsv(readFileSync(file, 'utf8'), format);
    rows = (parsed.complete ? parsed.rows : parsed.rows.slice(0, -1)).map((row) => row.cells);
  } catch {
    return [];
  }
  const [header, ...data] = rows;
  if (header === undefined) return [];
  const tamperEvident = isTamperEvidentHeader(header);
  const width = tamperEvident ? header.length - 2 : header.length;
  const columns = header.slice(0, width).map((name) => ({
    path: (name ?? '').split('.'),
    type: typeAt(schema, (name ?? '').split('.')),
  }));
  const events: AuditEvent[] = [];
  for (const cells of data) {
    if (cells.length !== header.length) continue;
    if (tamperEvident && cells[width] === undefined) continue; // a signature row
    const event: Record<string, unknown> = {};
    for (let c = 0; c < width; c++) {
      const cell = cells[c];
      if (cell === undefined) continue;
      setAt(event, columns[c]!.path, typed(cell, columns[c]!.type));
    }
    events.push(event as unknown as AuditEvent);
  }
  return events;
}

function typeAt(schema: JsonSchema, path: readonly string[]): string | undefined {
  let node: unknown = schema;
  for (const key of path) {
    const properties = (node as { properties?: Record<string, unknown> } | null)?.properties;
    node = properties?.[key];
    if (node === undefined) return undefined;
  }
  const type = (node as { type?: unknown }).type;
  return typeof type === 'string' ? type : undefined;
}

function typed(cell: string, type: string | undefined): unknown {
  switch (type) {
    case 'integer':
    case 'number': {
      const n = Number(cell);
      return cell.trim() !== '' && Number.isFinite(n) ? n : cell;
    }
    case 'boolean':
      return cell === 'true' ? true : cell === 'false' ? false : cell;
    case 'object':
    case 'array':
      try {
        return JSON.parse(cell);
      } catch {
        return cell;
      }
    default:
      return cell;
  }
}

function setAt(target: Record<string, unknown>, path: readonly string[], value: unknown): void {
  let node = target;
  for (let i = 0; i < path.length - 1; i++) {
    const key = path[i]!;
    const next = node[key];
    if (typeof next === 'object' && next !== null && !Array.isArray(next))
      node = next as Record<string, unknown>;
    else node = node[key] = {};
  }
  node[path.at(-1)!] = value;
}
