/** The retention periods a file may be given: `d` is days, `Y` is 365 days. */
export const RETENTION_PERIODS = ['30d', '45d', '90d', '120d', '180d', '1Y', '2Y', '3Y', '5Y'] as const;

/** Days in a retention period. */
export function retentionDays(period: (typeof RETENTION_PERIODS)[number]): number {
  const n = Number(period.slice(0, -1));
  return period.endsWith('Y') ? n * 365 : n;
}
