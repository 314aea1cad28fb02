export type OutputFormat = 'table' | 'json';

export interface Io {
  out(text: string): void;
  /** progress and errors: never mixed into what a script parses */
  err(text: string): void;
}

export type Column<T> = [header: string, cell: (row: T) => unknown];

/** Plain aligned columns, one row a line; empty cells are '-'. */
export function table<T>(rows: T[], columns: Column<T>[]): string {
  const cells = rows.map((row) => columns.map(([, cell]) => text(cell(row))));
  const headers = columns.map(([header]) => header);
  const widths = headers.map((h, i) => Math.max(h.length, ...cells.map((r) => r[i].length)));
  const line = (values: string[]) =>
    values
      .map((v, i) => (i === values.length - 1 ? v : v.padEnd(widths[i])))
      .join('  ')
      .trimEnd();
  return [line(headers), ...cells.map(line)].join('\n');
}

/** One record as `field  value` lines. */
export function record(entries: Array<[string, unknown]>): string {
  const width = Math.max(...entries.map(([k]) => k.length));
  return entries.map(([k, v]) => `${k.padEnd(width)}  ${text(v)}`).join('\n');
}

function text(value: unknown): string {
  if (value === null || value === undefined || value === '') return '-';
  if (typeof value === 'object') return JSON.stringify(value);
  return String(value);
}

/** Prints `data` as JSON, or through `render` as a table. */
export function print<T>(io: Io, format: OutputFormat, data: T, render: (data: T) => string): void {
  io.out(format === 'json' ? JSON.stringify(data, null, 2) : render(data));
}
