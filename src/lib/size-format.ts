const UNITS = ['B', 'KB', 'MB', 'GB', 'TB', 'PB'] as const;

/**
 * A byte count in the human-readable size format of docs/api.md: 1024-based, units `B KB MB GB TB
 * PB`, at most two decimals with trailing zeros trimmed (`0 B`, `512 B`, `1.5 KB`, `10 GB`).
 * Past the last unit the number simply grows (`2048 PB`).
 */
export function formatSize(bytes: number): string {
  if (!Number.isFinite(bytes) || bytes < 0) throw new RangeError(`not a byte count: ${bytes}`);
  let unit = 0;
  let value = bytes;
  while (value >= 1024 && unit < UNITS.length - 1) {
    value /= 1024;
    unit++;
  }
  let rounded = Math.round(value * 100) / 100;
  // 1023.999 KB rounds to 1024 KB: say 1 MB instead.
  if (rounded >= 1024 && unit < UNITS.length - 1) {
    rounded = 1;
    unit++;
  }
  // Number → string drops trailing zeros by itself (1.50 → "1.5", 10.00 → "10").
  return `${rounded} ${UNITS[unit]}`;
}
