/**
 * `cline-otel run --once` as a user runs it (a real process per run), reading the real CLI's
 * provider-request captures: the backend (an in-process OTLP receiver) holds exactly the capture
 * files' numbers, a second run changes no total, and delta never delivers a record twice.
 */
import { cpSync, mkdirSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { captureDirOf, expectedCaptures, homeOf } from "../adapter/cline/captures/helpers.ts";
import {
  cumulativeTotals,
  deltaTotals,
  histogramCount,
  type Receiver,
  startReceiver,
  sumBy,
} from "../export/helpers/otlp-receiver.ts";
import { runCliAsync } from "./helpers/cli.ts";
import { e2eScratch } from "./helpers/scratch.ts";

const scratch = e2eScratch();

type Totals = typeof cumulativeTotals;

/** Per stage: [records, payload bytes, estimated tokens], from the files and from the backend. */
function fromFiles(scenarios: string[]): Record<string, number[]> {
  const out: Record<string, number[]> = {};
  for (const c of scenarios.flatMap((s) => expectedCaptures(s))) {
    const e = out[c.stage] ?? [0, 0, 0];
    out[c.stage] = [
      (e[0] as number) + 1,
      (e[1] as number) + c.payloadBytes,
      (e[2] as number) + c.estimatedTokens,
    ];
  }
  return out;
}

function fromBackend(r: Receiver, totals: Totals): Record<string, number[]> {
  const stage = "cline.capture.stage";
  const records = sumBy(totals(r.points, "cline.request.captures"), stage);
  const counts = sumBy(totals(r.points, "cline.request.payload.size", histogramCount), stage);
  const payload = sumBy(totals(r.points, "cline.request.payload.size"), stage);
  const tokens = sumBy(totals(r.points, "cline.request.estimated_tokens"), stage);
  expect(counts).toEqual(records);
  return Object.fromEntries(
    Object.keys(records).map((s) => [s, [records[s] ?? 0, payload[s] ?? 0, tokens[s] ?? 0]]),
  );
}

function args(captureDir: string, state: string): string[] {
  return [
    "run",
    "--once",
    "--cline-dir",
    join(homeOf("captures"), ".cline"),
    "--capture-dir",
    captureDir,
    "--state-dir",
    state,
  ];
}

describe("run --once exports the provider-request capture metrics", () => {
  it("cumulative: exact totals; a second run on the same ledger changes none and keeps the start time", async () => {
    const work = scratch.dir("e2e-captures-");
    const rx = scratch.receiver(await startReceiver());
    const env = {
      OTEL_METRICS_EXPORTER: "otlp",
      OTEL_EXPORTER_OTLP_METRICS_ENDPOINT: rx.url,
      OTEL_EXPORTER_OTLP_TIMEOUT: "2000",
      // The recorded captures are dated 2026-11-30: past the default 7-day series TTL, the second
      // run would re-send none of their series (as it should for a real week-old history). This
      // test is about a re-run's totals, not the TTL (test/export/producer.test.ts has those).
      CLINE_OTEL_SERIES_TTL: String(100 * 365 * 86_400),
    };
    const a = args(captureDirOf("captures"), join(work, "state"));
    const r1 = await runCliAsync(a, env);
    expect(r1.status, r1.stderr).toBe(0);
    expect(r1.stderr).toMatch(/1 of 1 documents read, 6 of 6 capture files read, \+3 events, .*\+6 captures/);
    const want = fromFiles(["captures"]);
    expect(fromBackend(rx, cumulativeTotals)).toEqual(want);
    const r2 = await runCliAsync(a, env);
    expect(r2.status, r2.stderr).toBe(0);
    expect(fromBackend(rx, cumulativeTotals)).toEqual(want);
    const ours = rx.points.filter((p) => p.metric.startsWith("cline.request."));
    expect(new Set(ours.map((p) => p.request)).size).toBe(2);
    expect(new Set(ours.map((p) => p.startNs)).size).toBe(1);
  }, 60_000);

  it("delta: captures that appear between runs are delivered once, the earlier ones never again", async () => {
    const work = scratch.dir("e2e-captures-delta-");
    const caps = join(work, "caps");
    mkdirSync(caps);
    cpSync(captureDirOf("captures"), caps, { recursive: true });
    const rx = scratch.receiver(await startReceiver());
    const env = {
      OTEL_METRICS_EXPORTER: "otlp",
      OTEL_EXPORTER_OTLP_METRICS_ENDPOINT: rx.url,
      OTEL_EXPORTER_OTLP_METRICS_TEMPORALITY_PREFERENCE: "delta",
      OTEL_EXPORTER_OTLP_TIMEOUT: "2000",
    };
    const a = args(caps, join(work, "state"));
    const r1 = await runCliAsync(a, env);
    expect(r1.status, r1.stderr).toBe(0);
    expect(fromBackend(rx, deltaTotals)).toEqual(fromFiles(["captures"]));
    cpSync(captureDirOf("captures-full"), caps, { recursive: true });
    const r2 = await runCliAsync(a, env);
    expect(r2.status, r2.stderr).toBe(0);
    const r3 = await runCliAsync(a, env);
    expect(r3.status, r3.stderr).toBe(0);
    expect(fromBackend(rx, deltaTotals)).toEqual(fromFiles(["captures", "captures-full"]));
    expect(rx.points.every((p) => p.temporality === "delta" || p.scope !== "cline-otel")).toBe(true);
  }, 60_000);
});
