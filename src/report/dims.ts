/**
 * The `report --by` dimensions and `--sort` keys; apart from the report so the CLI's option
 * parsing loads no catalog and no ledger.
 */
export const TIME_DIMS = ["day", "week", "month"] as const;
export type TimeDim = (typeof TIME_DIMS)[number];

export const GROUP_DIMS = [
  ...TIME_DIMS,
  "model",
  "provider",
  "project",
  "session",
  "agent",
  "tool",
  "client",
] as const;
export type GroupDim = (typeof GROUP_DIMS)[number];

export function isTimeDim(d: GroupDim): d is TimeDim {
  return (TIME_DIMS as readonly string[]).includes(d);
}

export const SORT_KEYS = ["cost", "tokens", "requests"] as const;
export type SortKey = (typeof SORT_KEYS)[number];
