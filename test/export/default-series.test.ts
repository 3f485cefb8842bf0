/**
 * The team setting a shared backend needs (docs/metrics.md "Cardinality"):
 * OTEL_METRICS_INCLUDE_SESSION_ID=false leaves session.id off metric series (their totals are the
 * ledger's folded by the other attributes, sent in pages), while events keep it. With nothing set
 * (the default since issue 28) the series carry it.
 */
import { afterEach, describe, expect, it } from "vitest";
import { resolveConfig } from "../../src/config/config.ts";
import { ExportPipeline } from "../../src/export/pipeline.ts";
import { SignalPipeline } from "../../src/export/signals/pipeline.ts";
import { createLogger } from "../../src/util/log.ts";
import { signalsTestConfig, testResource } from "./helpers/config.ts";
import { expectClose, expectedTotals, priceOf } from "./helpers/expected.ts";
import { fillLedger, type TempLedger, tempLedger } from "./helpers/ledger.ts";
import { attrKey, type Receiver, startReceiver } from "./helpers/otlp-receiver.ts";

let t: TempLedger | undefined;
let rx: Receiver | undefined;
const closers: (() => Promise<unknown>)[] = [];
afterEach(async () => {
  for (const c of closers.splice(0)) await c();
  await rx?.close();
  rx = undefined;
  t?.dispose();
  t = undefined;
});

describe("the team setting: no session.id on metric series", () => {
  it("the default is on: nothing set resolves to session.id on metric series", () => {
    const dirs = {
      stateDir: "/tmp/unused-state",
      sessionsDir: "/tmp/unused-sessions",
      dbDir: "/tmp/unused-db",
    };
    expect(resolveConfig(dirs, {}, "/tmp", "/tmp").export.includeSessionId).toBe(true);
    expect(
      resolveConfig(dirs, { OTEL_METRICS_INCLUDE_SESSION_ID: "false" }, "/tmp", "/tmp").export
        .includeSessionId,
    ).toBe(false);
  });

  it("metric points carry none and hold the folded totals, in pages; events keep session.id", async () => {
    t = tempLedger();
    rx = await startReceiver();
    fillLedger(t.ledger, { sessions: 12 });
    const cfg = resolveConfig(
      { stateDir: "/tmp/unused-state", sessionsDir: "/tmp/unused-sessions", dbDir: "/tmp/unused-db" },
      {
        OTEL_METRIC_EXPORT_INTERVAL: "3600000",
        CLINE_OTEL_USER: "",
        // The one setting a team turns it off with (otel-collector/gateway.yaml, docs/backends.md).
        OTEL_METRICS_INCLUDE_SESSION_ID: "false",
        OTEL_EXPORTER_OTLP_METRICS_ENDPOINT: rx.url,
      },
      "/tmp",
      "/tmp",
    );
    expect(cfg.export.includeSessionId).toBe(false);
    const p = await ExportPipeline.start(cfg.export, t.ledger, {
      logger: createLogger("error", () => {}),
      priceOf,
      serviceVersion: "9.9.9",
      pagePoints: 24,
    });
    closers.push(() => p.shutdown());
    expect(await p.flush()).toEqual({ ok: true });
    expect(rx.requests.length).toBeGreaterThan(2);
    const cline = rx.points.filter((x) => x.metric.startsWith("cline.") || x.metric.startsWith("gen_ai."));
    expect(cline.length).toBeGreaterThan(0);
    expect(cline.filter((x) => "session.id" in x.attributes)).toEqual([]);
    for (const [metric, want] of expectedTotals(t.ledger, false)) {
      if (want.size === 0) continue;
      const got = new Map(
        rx.points.filter((x) => x.metric === metric).map((x) => [attrKey(x.attributes), x.value]),
      );
      expectClose(got, want);
    }
    const signals = await SignalPipeline.create(
      signalsTestConfig({ OTEL_LOGS_EXPORTER: "otlp", OTEL_EXPORTER_OTLP_LOGS_ENDPOINT: rx.logsUrl }),
      t.ledger,
      {
        logger: createLogger("error", () => {}),
        priceOf,
        project: "path",
        resource: testResource(t.ledger),
        serviceVersion: "9.9.9",
      },
    );
    closers.push(() => signals.shutdown());
    expect(await signals.flush()).toEqual({ ok: true });
    expect(rx.logs.length).toBeGreaterThan(0);
    expect(rx.logs.filter((l) => typeof l.attributes["session.id"] !== "string")).toEqual([]);
  });
});
