// One stable order for names everywhere: by UTF-16 code unit, like Go's string comparison, and
// independent of the machine's locale (localeCompare is not).
export function byCodeUnit(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}
