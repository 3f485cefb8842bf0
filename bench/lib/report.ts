/**
 * The benchmark's one table: one row per measurement, its median, the baseline it is judged
 * against, the ratio (measured in the same run) and the target.
 */

export interface Row {
  /** Case name as given on the command line (scan, backfill, ...). */
  readonly case: string;
  readonly measure: string;
  /** Median of the measured thing, formatted with its unit. */
  readonly value: string;
  /** The baseline's median, formatted, with what it is. */
  readonly baseline?: string;
  readonly ratio?: number;
  /** What the ratio divides, e.g. "JSON.parse / scanner". */
  readonly ratioOf?: string;
  /** Human-readable target, e.g. ">= 3"; absent for informational rows. */
  readonly target?: string;
  readonly ok?: boolean;
}

export interface CaseResult {
  readonly name: string;
  readonly rows: readonly Row[];
  /** Extra lines printed under the table (what bounds the case, per-run samples). */
  readonly notes: readonly string[];
  /** Everything measured, for the JSON output. */
  readonly data: unknown;
}

/** `ratio >= min` / `ratio <= max` targets, as a row's target text and verdict. */
export function atLeast(ratio: number, min: number): Pick<Row, "target" | "ok"> {
  return { target: `>= ${min}`, ok: ratio >= min };
}

export function atMost(ratio: number, max: number): Pick<Row, "target" | "ok"> {
  return { target: `<= ${max}`, ok: ratio <= max };
}

function cell(s: string | undefined): string {
  return s ?? "";
}

/** Renders rows as a fixed-width text table. */
export function renderTable(rows: readonly Row[]): string {
  const head = ["case", "measure", "median", "baseline (median)", "ratio", "target", "ok"];
  const body = rows.map((r) => [
    r.case,
    r.measure,
    r.value,
    cell(r.baseline),
    r.ratio === undefined ? "" : `${r.ratio.toFixed(2)}${r.ratioOf ? ` (${r.ratioOf})` : ""}`,
    cell(r.target),
    r.ok === undefined ? "" : r.ok ? "yes" : "MISSED",
  ]);
  const widths = head.map((h, i) => Math.max(h.length, ...body.map((b) => (b[i] as string).length)));
  const line = (cols: readonly string[]): string =>
    cols
      .map((c, i) => c.padEnd(widths[i] as number))
      .join("  ")
      .trimEnd();
  return [line(head), line(widths.map((w) => "-".repeat(w))), ...body.map(line)].join("\n");
}
