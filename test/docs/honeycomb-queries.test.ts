/**
 * docs/backends.md's Honeycomb tables name metrics, events and attributes exactly as cline-otel exports
 * them: a query with a misspelt metric (`cline.active_time.total`) or attribute (`startType`) finds
 * nothing in Honeycomb and says so nowhere. Every name is checked against the code's own constants.
 */
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { DEFAULT_COPY_RESOURCE_ATTRIBUTES } from "../../src/config/teams.ts";
import { ACTIVITY_ALLOWED_ATTRIBUTES, ACTIVITY_METRICS } from "../../src/export/activity.ts";
import { ALLOWED_ATTRIBUTES, PRODUCER_ATTRIBUTE } from "../../src/export/attributes.ts";
import { CAPTURE_ALLOWED_ATTRIBUTES, CAPTURE_METRICS } from "../../src/export/captures.ts";
import { COMPACTION_ALLOWED_ATTRIBUTES, COMPACTION_METRIC } from "../../src/export/compactions.ts";
import { EVENT_NAMES } from "../../src/export/events/records.ts";
import { GENAI_ATTRIBUTES, GENAI_METRICS } from "../../src/export/genai/metrics.ts";
import { METRICS } from "../../src/export/translate.ts";
import { ROOT } from "../helpers/cli.ts";

const METRIC_NAMES = new Set<string>([
  ...Object.values(METRICS).map((m) => m.name),
  ...Object.values(ACTIVITY_METRICS).map((m) => m.name),
  ...Object.values(CAPTURE_METRICS).map((m) => m.name),
  ...Object.values(GENAI_METRICS).map((m) => m.name),
  COMPACTION_METRIC.name,
]);

/** What a metric point can carry: every allow-list, the producer and the copied resource attributes. */
const METRIC_ATTRIBUTES = new Set<string>([
  ...ALLOWED_ATTRIBUTES,
  ...ACTIVITY_ALLOWED_ATTRIBUTES,
  ...CAPTURE_ALLOWED_ATTRIBUTES,
  ...COMPACTION_ALLOWED_ATTRIBUTES,
  ...GENAI_ATTRIBUTES,
  ...Object.keys(PRODUCER_ATTRIBUTE),
  ...DEFAULT_COPY_RESOURCE_ATTRIBUTES,
]);

interface QueryRow {
  readonly line: string;
  /** `SUM(x)` -> x, of the VISUALIZE cell. */
  readonly aggregated: string[];
  /** The keys the WHERE and GROUP BY cells filter or group on. */
  readonly keys: string[];
  /** The event the row selects (`name = cline.code_edit`), if any. */
  readonly event?: string;
}

/**
 * The rows of backends.md's query tables (those headed `| question | VISUALIZE | WHERE | GROUP BY ...`).
 * A note in brackets after a space (`(seconds; ...)`) is prose, not a key.
 */
function honeycombRows(text: string): QueryRow[] {
  const rows: QueryRow[] = [];
  let inTable = false;
  for (const line of text.split("\n")) {
    if (line.startsWith("| question | VISUALIZE | WHERE |")) {
      inTable = true;
      continue;
    }
    if (!line.startsWith("|")) inTable = false;
    if (!inTable || line.startsWith("|---")) continue;
    const cells = line.split(" | ");
    const ticks = (cell: string): string[] =>
      [...cell.replace(/\s\([^)]*\)/g, "").matchAll(/`([^`]+)`/g)].map((m) => m[1] as string);
    const aggregated = ticks(cells[1] ?? "").flatMap((t) =>
      [...t.matchAll(/[A-Z_]+\(([^)]+)\)/g)].map((m) => m[1] as string),
    );
    const where = ticks(cells[2] ?? "").map((t) => (t.split(/ (?:=|in|!=) /)[0] as string).trim());
    const group = ticks(cells[3] ?? "").filter((t) => !/^[A-Z_]+\(/.test(t));
    const event = /`name = ([^`]+)`/.exec(cells[2] ?? "")?.[1];
    rows.push({ line, aggregated, keys: [...where, ...group], ...(event === undefined ? {} : { event }) });
  }
  return rows;
}

/** What is wrong with a row: names no code exports. */
function unknownNames(row: QueryRow): string[] {
  const bad: string[] = [];
  if (row.event !== undefined) {
    // An event query: the event must exist; its fields are the event's own (docs/events.md).
    if (!(Object.values(EVENT_NAMES) as string[]).includes(row.event)) bad.push(`event ${row.event}`);
    return bad;
  }
  for (const m of row.aggregated) if (!METRIC_NAMES.has(m)) bad.push(`metric ${m}`);
  for (const k of row.keys) if (!METRIC_ATTRIBUTES.has(k)) bad.push(`attribute ${k}`);
  return bad;
}

describe("docs/backends.md Honeycomb queries", () => {
  const rows = honeycombRows(readFileSync(join(ROOT, "docs", "backends.md"), "utf8"));

  it("name only metrics, events and attributes the code exports", () => {
    expect(rows.length).toBeGreaterThan(30);
    expect(rows.flatMap((r) => unknownNames(r).map((b) => `${b}: ${r.line}`))).toEqual([]);
  });

  it("cover what Cline delivered: lines, decisions, active time, commits, pull requests, sessions", () => {
    const used = new Set(rows.flatMap((r) => r.aggregated));
    for (const m of [
      METRICS.linesOfCode.name,
      METRICS.editDecisions.name,
      ...Object.values(ACTIVITY_METRICS).map((a) => a.name),
    ])
      expect(used).toContain(m);
    const keys = new Set(
      rows.filter((r) => r.aggregated.includes(ACTIVITY_METRICS.session.name)).flatMap((r) => r.keys),
    );
    expect(keys).toContain("start_type");
  });

  it("is a check that can fail", () => {
    const head = "| question | VISUALIZE | WHERE | GROUP BY |\n|---|---|---|---|\n";
    const [row] = honeycombRows(
      head +
        "| q | `SUM(cline.active_time.total)` | `cline_otel.producer = cline-otel`, `startType = new` | `team.id`, `typ`; ORDER BY `SUM(cline.active_time.total)` desc |",
    );
    expect(unknownNames(row as QueryRow)).toEqual([
      "metric cline.active_time.total",
      "attribute startType",
      "attribute typ",
    ]);
    const [event] = honeycombRows(
      `${head}| q | \`COUNT\` | \`name = cline.code_edits\`, \`decision = rejected\` | \`language\` |`,
    );
    expect(unknownNames(event as QueryRow)).toEqual(["event cline.code_edits"]);
    const [good] = honeycombRows(
      head +
        "| q | `SUM(cline.sessions)` | `cline_otel.producer = cline-otel`, `start_type = new` | `user.name` |",
    );
    expect(unknownNames(good as QueryRow)).toEqual([]);
  });
});
