/**
 * Team attributes on the data: `user.name` and the copied resource attributes on every metric
 * point, log record and span; the repository (opt-in) with credentials stripped; the
 * OTEL_METRICS_INCLUDE_* switches change metric series only. Through the real OTLP exporters.
 */
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { ExportPipeline } from "../../src/export/pipeline.ts";
import { createLogger } from "../../src/util/log.ts";
import { exportTestConfig } from "./helpers/config.ts";
import { expectedTotals, priceOf } from "./helpers/expected.ts";
import { fillLedger, type TempLedger, tempLedger } from "./helpers/ledger.ts";
import { cumulativeTotals, type Receiver, startReceiver, sumBy } from "./helpers/otlp-receiver.ts";

const TOKEN = "glpat-TEAMSsecret0987654321";

let t: TempLedger | undefined;
let rx: Receiver | undefined;
let work: string | undefined;
const pipelines: ExportPipeline[] = [];
afterEach(async () => {
  for (const p of pipelines.splice(0)) await p.shutdown();
  await rx?.close();
  rx = undefined;
  t?.dispose();
  t = undefined;
  if (work) rmSync(work, { recursive: true, force: true });
  work = undefined;
});

/** Two workspaces: one a clone whose remote holds a token, one without any git. */
function workspaces(): { repo: string; plain: string } {
  work = mkdtempSync(join(tmpdir(), "cline-otel-teams-"));
  const repo = join(work, "widgets");
  mkdirSync(join(repo, ".git"), { recursive: true });
  writeFileSync(
    join(repo, ".git", "config"),
    `[remote "origin"]\n\turl = https://ci:${TOKEN}@gitlab.example.com/acme/widgets.git?private_token=${TOKEN}\n`,
  );
  writeFileSync(join(repo, ".git", "HEAD"), "ref: refs/heads/main\n");
  const plain = join(work, "scratch");
  mkdirSync(plain);
  return { repo, plain };
}

async function start(env: Record<string, string>, logs: string[]) {
  if (!t || !rx) throw new Error("setup first");
  const cfg = exportTestConfig({
    OTEL_EXPORTER_OTLP_ENDPOINT: rx.baseUrl,
    OTEL_LOGS_EXPORTER: "otlp",
    OTEL_TRACES_EXPORTER: "otlp",
    ...env,
  });
  const p = await ExportPipeline.start(cfg.export, t.ledger, {
    logger: createLogger("debug", (l) => logs.push(l)),
    priceOf,
    serviceVersion: "9.9.9",
  });
  pipelines.push(p);
  return p;
}

const json = (x: unknown) => JSON.stringify(x, (_k, v) => (typeof v === "bigint" ? String(v) : v));

describe("team attributes", () => {
  it("user and team on every point, record and span; the repository without its token", async () => {
    const { repo, plain } = workspaces();
    t = tempLedger();
    fillLedger(t.ledger, { sessions: 6, projects: [repo, plain] });
    rx = await startReceiver();
    const logs: string[] = [];
    const p = await start(
      {
        CLINE_OTEL_USER: "alice",
        OTEL_RESOURCE_ATTRIBUTES: "team.id=payments,department=eng,host.type=laptop",
        CLINE_OTEL_REPOSITORY: "true",
      },
      logs,
    );
    expect(await p.flush()).toEqual({ ok: true });
    const ours = rx.points.filter((x) => x.scope === "cline-otel");
    expect(ours.length).toBeGreaterThan(0);
    expect(rx.logs.length).toBeGreaterThan(0);
    expect(rx.spans.length).toBeGreaterThan(0);
    for (const x of [...ours, ...rx.logs, ...rx.spans]) {
      expect(x.attributes).toMatchObject({ "user.name": "alice", "team.id": "payments", department: "eng" });
      // Only the listed keys are copied: the rest stays on the resource.
      expect(x.attributes).not.toHaveProperty("host.type");
      expect(x.resource).toMatchObject({ "user.name": "alice", "team.id": "payments" });
    }
    // Usage series of the clone carry its repository (no branch: it would split series).
    const usage = ours.filter((x) => x.metric === "cline.token.usage");
    const fromRepo = usage.filter((x) => x.attributes["cline.project"] === repo);
    expect(fromRepo.length).toBeGreaterThan(0);
    for (const x of fromRepo) {
      expect(x.attributes).toMatchObject({
        "vcs.repository.url.full": "https://gitlab.example.com/acme/widgets",
        "vcs.repository.name": "widgets",
        "vcs.owner.name": "acme",
      });
      expect(x.attributes).not.toHaveProperty("vcs.ref.head.name");
    }
    for (const x of usage.filter((x) => x.attributes["cline.project"] === plain))
      expect(Object.keys(x.attributes).some((k) => k.startsWith("vcs."))).toBe(false);
    // Events and spans: the branch too.
    const repoLogs = rx.logs.filter((l) => l.attributes["cline.project"] === repo);
    expect(repoLogs.length).toBeGreaterThan(0);
    for (const l of repoLogs) expect(l.attributes["vcs.ref.head.name"]).toBe("main");
    // Totals unchanged by the extra attributes.
    for (const [name, series] of expectedTotals(t.ledger)) {
      const got = sumBy(cumulativeTotals(rx.points, name), "user.name");
      const want = [...series.values()].reduce((a, b) => a + b, 0);
      // A metric this ledger has no series of (the edits of an adapter that reads none) is not sent.
      expect(got.alice ?? 0, name).toBeCloseTo(want, 6);
    }
    // The token: in no payload, no log line, no ledger file.
    expect(json([rx.points, rx.logs, rx.spans])).not.toContain(TOKEN);
    expect(logs.join("\n")).not.toContain(TOKEN);
    for (const f of readdirSync(t.dir)) expect(readFileSync(join(t.dir, f)).includes(TOKEN)).toBe(false);
    // Nothing written in the workspaces.
    expect(readdirSync(repo)).toEqual([".git"]);
    expect(readdirSync(join(repo, ".git")).sort()).toEqual(["HEAD", "config"]);
    expect(readdirSync(plain)).toEqual([]);
  });

  it("OTEL_METRICS_INCLUDE_*: off on metric series, kept on events and spans; empty copy list = none", async () => {
    const { repo } = workspaces();
    t = tempLedger();
    fillLedger(t.ledger, { sessions: 4, projects: [repo] });
    rx = await startReceiver();
    const p = await start(
      {
        CLINE_OTEL_USER: "bob",
        OTEL_RESOURCE_ATTRIBUTES: "team.id=core",
        CLINE_OTEL_REPOSITORY: "true",
        OTEL_METRICS_INCLUDE_USER: "false",
        OTEL_METRICS_INCLUDE_REPOSITORY: "false",
        OTEL_METRICS_INCLUDE_PROJECT: "false",
        OTEL_METRICS_INCLUDE_SESSION_ID: "false",
      },
      [],
    );
    expect(await p.flush()).toEqual({ ok: true });
    const ours = rx.points.filter((x) => x.scope === "cline-otel");
    for (const x of ours) {
      expect(x.attributes["team.id"]).toBe("core");
      for (const k of ["user.name", "session.id", "cline.project", "vcs.repository.name"])
        expect(x.attributes).not.toHaveProperty(k);
    }
    for (const x of [...rx.logs, ...rx.spans])
      expect(x.attributes).toMatchObject({
        "user.name": "bob",
        "team.id": "core",
        "cline.project": repo,
        "vcs.repository.name": "widgets",
      });
  });

  it("CLINE_OTEL_COPY_RESOURCE_ATTRIBUTES= copies nothing; CLINE_OTEL_USER= leaves the user out", async () => {
    t = tempLedger();
    fillLedger(t.ledger, { sessions: 2 });
    rx = await startReceiver();
    const p = await start(
      { OTEL_RESOURCE_ATTRIBUTES: "team.id=core", CLINE_OTEL_COPY_RESOURCE_ATTRIBUTES: "" },
      [],
    );
    expect(await p.flush()).toEqual({ ok: true });
    for (const x of [...rx.points.filter((x) => x.scope === "cline-otel"), ...rx.logs, ...rx.spans]) {
      expect(x.attributes).not.toHaveProperty("team.id");
      expect(x.attributes).not.toHaveProperty("user.name");
      expect(x.resource).not.toHaveProperty("user.name");
      expect(x.resource["team.id"]).toBe("core");
    }
  });
});
