/** A Markdown table with padded columns: readable in a terminal, pasteable into a README. */
export function markdownTable(headers: readonly string[], rows: readonly (readonly string[])[]): string {
  const widths = headers.map((header, i) =>
    Math.max(header.length, ...rows.map((row) => (row[i] ?? '').length)),
  );
  const numeric = headers.map(
    (_, i) => rows.length > 0 && rows.every((row) => /^[-\d.,×%≥ *]*$|^—$/.test(row[i] ?? '')),
  );
  const pad = (cell: string, i: number) => (numeric[i] ? cell.padStart(widths[i]!) : cell.padEnd(widths[i]!));
  const line = (cells: readonly string[]) => `| ${cells.map(pad).join(' | ')} |`;
  const dashes = (width: number, i: number) =>
    numeric[i] ? `${'-'.repeat(width + 1)}:` : '-'.repeat(width + 2);
  const rule = `|${widths.map(dashes).join('|')}|`;
  return [line(headers), rule, ...rows.map(line)].join('\n');
}

export const DASH = '—';

export function integer(value: number | undefined): string {
  return value === undefined || !Number.isFinite(value) ? DASH : Math.round(value).toLocaleString('en-US');
}

export function fixed(value: number | undefined, digits: number): string {
  return value === undefined || !Number.isFinite(value) ? DASH : value.toFixed(digits);
}

export function ratio(value: number | undefined): string {
  return value === undefined || !Number.isFinite(value) ? DASH : `${value.toFixed(2)}×`;
}

/** Latency in ms: three decimals below 1 ms, two below 100 ms, none above. */
export function millis(value: number | undefined): string {
  if (value === undefined || !Number.isFinite(value)) return DASH;
  return value.toFixed(value < 1 ? 3 : value < 100 ? 2 : 0);
}
