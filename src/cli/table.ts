// Plain aligned tables, as kubectl prints them, and the output formats every command offers.
import { InvalidArgumentError } from 'commander';

export type Output = 'table' | 'json' | 'yaml';

/** The value of an `-o, --output` option. */
export function parseOutput(v: string): Output {
  if (v === 'table' || v === 'json' || v === 'yaml') return v;
  throw new InvalidArgumentError('expected table, json or yaml');
}

/**
 * A cell as the terminal may show it: control characters (a peer's version or an error text may
 * carry escape sequences meant for the reader's terminal) and bidirectional overrides (which
 * reorder what follows) become `?`.
 */
export function printable(cell: string): string {
  // eslint-disable-next-line no-control-regex -- control characters are what it replaces
  return cell.replace(/[\u0000-\u001f\u007f-\u009f\u202a-\u202e\u2066-\u2069]/g, '?');
}

export function formatTable(header: readonly string[], cells: readonly (readonly string[])[]): string {
  const rows = cells.map((r) => r.map(printable));
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => (r[i] ?? '').length)));
  const line = (cells: readonly string[]) => cells.map((c, i) => (i === cells.length - 1 ? c : c.padEnd(widths[i] ?? 0))).join('   ');
  return [line(header), ...rows.map(line)].join('\n') + '\n';
}
