/**
 * The outcome `rejected` (a call the user denied) through the export layer, from ledger rows:
 * cline.tool.calls counts it under cline.tool.outcome=rejected; its cline.tool_call event is INFO
 * with no error.type; its execute_tool span keeps status UNSET (a denial is not an error of the
 * tool), while a failure is WARN, error.type=tool_error and status ERROR. docs/metrics.md,
 * docs/events.md and docs/traces.md say the same.
 */
import { resourceFromAttributes } from "@opentelemetry/resources";
import { afterEach, describe, expect, it } from "vitest";
import { toLogRecord } from "../../src/export/events/records.ts";
import { buildPriceLookup } from "../../src/export/price-lookup.ts";
import { toSpan } from "../../src/export/traces/spans.ts";
import { NO_PRICES, translate } from "../../src/export/translate.ts";
import type { SignalKind, SignalRow } from "../../src/ledger/signals.ts";
import { call, docSignals, event, observation, result } from "../helpers/events.ts";
import { type TempLedger, tempLedger } from "./helpers/ledger.ts";

let t: TempLedger | undefined;
afterEach(() => {
  t?.dispose();
  t = undefined;
});

const ALL: ReadonlySet<SignalKind> = new Set(["chat", "tool", "turn", "compaction"]);
const OUTCOMES = ["success", "failure", "rejected"] as const;

/** One message paying three calls, answered success / failure (is_error) / rejected (denied). */
function ledgerWithOutcomes(): TempLedger {
  const l = tempLedger();
  const paid = event("m1", { toolCallCount: 3, client: "cli" });
  const calls = OUTCOMES.map((o) =>
    call(`c_${o}`, paid.dedupKey, 3, { toolName: "editor", toolUseId: `t_${o}` }),
  );
  const results = calls.map((c, i) =>
    OUTCOMES[i] === "rejected" ? { ...result(c, true), outcome: "rejected" as const } : result(c, i === 1),
  );
  l.ledger.commit(observation([paid], calls, 100, undefined, docSignals(results)));
  return l;
}

describe("the outcome rejected on every signal", () => {
  it("cline.tool.calls: one point per outcome, rejected apart from failure", () => {
    t = ledgerWithOutcomes();
    const outcomes = t.ledger.signals?.toolOutcomes.series() ?? [];
    const points = translate(
      [],
      [],
      { project: "path", includeSessionId: true, priceOf: NO_PRICES },
      outcomes,
    );
    const byOutcome = Object.fromEntries(
      (points.get("toolCalls") ?? []).map((p) => [p.attributes["cline.tool.outcome"], p.value]),
    );
    expect(byOutcome).toEqual({ success: 1, failure: 1, rejected: 1 });
  });

  it("events and spans: a denial is INFO, no error.type, span UNSET; a failure WARN, tool_error, ERROR", () => {
    t = ledgerWithOutcomes();
    const s = t.ledger.signals;
    if (s === undefined) throw new Error("a writer has signals");
    const rows: readonly SignalRow[] = s.batch(s.cursor("audit", 0), ALL, 1000).rows;
    const tools = new Map(rows.filter((r) => r.kind === "tool").map((r) => [r.outcome, r]));
    expect([...tools.keys()].sort()).toEqual(["failure", "rejected", "success"]);
    const ctx = {
      resource: resourceFromAttributes({}),
      scope: { name: "cline-otel" },
      project: "path" as const,
      priceOf: buildPriceLookup(undefined),
    };
    const seen = Object.fromEntries(
      OUTCOMES.map((o) => {
        const row = tools.get(o) as SignalRow;
        const rec = toLogRecord(row, ctx, 0);
        const span = toSpan(row, ctx);
        return [
          o,
          {
            severity: rec?.severityText,
            outcome: rec?.attributes["cline.tool.outcome"],
            errorType: rec?.attributes["error.type"],
            spanOutcome: span.attributes["cline.tool.outcome"],
            spanErrorType: span.attributes["error.type"],
            status: span.status.code,
          },
        ];
      }),
    );
    expect(seen).toEqual({
      success: {
        severity: "INFO",
        outcome: "success",
        errorType: undefined,
        spanOutcome: "success",
        spanErrorType: undefined,
        status: 0,
      },
      failure: {
        severity: "WARN",
        outcome: "failure",
        errorType: "tool_error",
        spanOutcome: "failure",
        spanErrorType: "tool_error",
        status: 2,
      },
      rejected: {
        severity: "INFO",
        outcome: "rejected",
        errorType: undefined,
        spanOutcome: "rejected",
        spanErrorType: undefined,
        status: 0,
      },
    });
  });

  it("cline.tool.duration has a rejected row of its own", () => {
    t = ledgerWithOutcomes();
    const rows = t.ledger.signals?.genaiSeries() ?? [];
    expect(
      rows
        .filter((r) => r.outcome !== "")
        .map((r) => r.outcome)
        .sort(),
    ).toEqual(["failure", "rejected", "success"]);
  });
});
