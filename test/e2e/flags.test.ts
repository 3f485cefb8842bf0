/** `cline-otel run` flags reach the exported data (a real process, an in-process receiver). */
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { startReceiver } from "../export/helpers/otlp-receiver.ts";
import { onceArgs, otlpEnv, runCliAsync } from "./helpers/cli.ts";
import { e2eScratch } from "./helpers/scratch.ts";
import { metricsFor, writeSession } from "./helpers/sessions.ts";

const scratch = e2eScratch();

async function setup() {
  const { work, sessionsDir } = scratch.withSessions("e2e-flags-");
  for (const n of [1, 2]) {
    writeSession(sessionsDir, {
      sessionId: `179600000000${n}_flags`,
      cwd: "/home/alice/secret-project",
      messages: [{ id: "msg_1", model: "special-model", provider: "acme", metrics: metricsFor(n) }],
    });
  }
  const rx = scratch.receiver(await startReceiver());
  const args = onceArgs(work, sessionsDir);
  const env = otlpEnv(rx.url);
  return { args, env, work, rx };
}

describe("run flags", () => {
  it("--project hash --no-session-id: no path, no session id, the two sessions summed", async () => {
    const { args, env, rx } = await setup();
    const r = await runCliAsync([...args, "--project", "hash", "--no-session-id"], env);
    expect(r.status, r.stderr).toBe(0);
    const req = rx.points.filter((p) => p.metric === "cline.requests");
    expect(req).toHaveLength(1);
    expect(req[0]?.value).toBe(2);
    expect(req[0]?.attributes).not.toHaveProperty("session.id");
    expect(String(req[0]?.attributes["cline.project"])).toMatch(/^[0-9a-f]{16}$/);
    expect(JSON.stringify(rx.points.map((p) => p.attributes))).not.toContain("secret");
  });

  it("default: session id on metric series, the two sessions split; the team setting sums them", async () => {
    const { args, env, rx } = await setup();
    const r = await runCliAsync(args, env);
    expect(r.status, r.stderr).toBe(0);
    const split = rx.points.filter((p) => p.metric === "cline.requests");
    expect(split.map((p) => String(p.attributes["session.id"])).sort()).toEqual([
      "1796000000001_flags",
      "1796000000002_flags",
    ]);
    // OTEL_METRICS_INCLUDE_SESSION_ID=false, the one setting a team's shared backend needs (folded in SQL).
    const off = await setup();
    const r2 = await runCliAsync(off.args, { ...off.env, OTEL_METRICS_INCLUDE_SESSION_ID: "false" });
    expect(r2.status, r2.stderr).toBe(0);
    const req = off.rx.points.filter((p) => p.metric === "cline.requests");
    expect(req.map((p) => p.value)).toEqual([2]);
    expect(req[0]?.attributes).not.toHaveProperty("session.id");
    // --session-id overrides the variable (the flag first, then the environment).
    const on = await setup();
    const r3 = await runCliAsync([...on.args, "--session-id"], {
      ...on.env,
      OTEL_METRICS_INCLUDE_SESSION_ID: "false",
    });
    expect(r3.status, r3.stderr).toBe(0);
    expect(on.rx.points.filter((p) => p.metric === "cline.requests")).toHaveLength(2);
  });

  it("--prices prices a model the catalog does not know; without it the requests are unpriced", async () => {
    const { args, env, work: dir, rx } = await setup();
    const prices = join(dir, "prices.json");
    writeFileSync(prices, JSON.stringify({ prices: { acme: { "special-model": { input: 1, output: 2 } } } }));
    const unpriced = await runCliAsync(args, env);
    expect(unpriced.status, unpriced.stderr).toBe(0);
    expect(rx.points.some((p) => p.metric === "cline.requests.unpriced")).toBe(true);
    expect(rx.points.some((p) => p.metric === "cline.cost.usage")).toBe(false);
    rx.points.splice(0);
    const priced = await runCliAsync([...args, "--prices", prices], env);
    expect(priced.status, priced.stderr).toBe(0);
    expect(rx.points.some((p) => p.metric === "cline.cost.usage" && p.value > 0)).toBe(true);
    expect(rx.points.some((p) => p.metric === "cline.requests.unpriced")).toBe(false);
  });

  it("a bad price file or project mode is a configuration error (exit 2)", async () => {
    const { args, env, work: dir } = await setup();
    const bad = join(dir, "bad.json");
    writeFileSync(bad, "{ nope");
    const r1 = await runCliAsync([...args, "--prices", bad], env);
    expect(r1.status).toBe(2);
    expect(r1.stderr).toContain("bad.json");
    const r2 = await runCliAsync([...args, "--project", "everything"], env);
    expect(r2.status).toBe(2);
    expect(r2.stderr).toContain("--project");
  });
});
