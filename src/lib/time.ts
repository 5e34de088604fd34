/** Timestamps are stored and sent as ISO 8601 UTC strings with milliseconds; they sort as text. */
export function nowIso(): string {
  return new Date().toISOString();
}

export function isoPlus(iso: string, ms: number): string {
  return new Date(Date.parse(iso) + ms).toISOString();
}

export const DAY_MS = 24 * 60 * 60 * 1000;
