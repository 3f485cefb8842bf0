/**
 * `cline-otel run --once` over OTLP/gRPC as a user runs it (a real process per run): restarts
 * on the same ledger add nothing twice, an unreachable collector loses nothing, as over HTTP
 * (test/e2e/restart.test.ts).
 */

import { chmodSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { status } from "@grpc/grpc-js";
import { describe, expect, it } from "vitest";
import { onceArgs, runCliAsync } from "../e2e/helpers/cli.ts";
import { e2eScratch } from "../e2e/helpers/scratch.ts";
import { type SessionSpec, toolSession, truthByType, writeSession } from "../e2e/helpers/sessions.ts";
import { startGrpcReceiver } from "./helpers/grpc-receiver.ts";
import { cumulativeTotals, sumBy } from "./helpers/otlp-receiver.ts";

const scratch = e2eScratch();

const session = (n: number, messages: number): SessionSpec => toolSession(n, messages, "grpcx");

function grpcEnv(url: string): Record<string, string> {
  return {
    OTEL_METRICS_EXPORTER: "otlp",
    OTEL_EXPORTER_OTLP_PROTOCOL: "grpc",
    OTEL_EXPORTER_OTLP_ENDPOINT: url,
    OTEL_EXPORTER_OTLP_TIMEOUT: "2000",
    OTEL_EXPORTER_OTLP_HEADERS: "x-api-key=SECRET-grpc-key",
  };
}

describe("run --once over gRPC", () => {
  it("twice on the same ledger: the backend's totals are unchanged, one stream start; a new session adds exactly its tokens", async () => {
    const { work, sessionsDir } = scratch.withSessions("grpc-restart-");
    const sessions = [0, 1, 2].map((n) => session(n, 3 + n));
    for (const s of sessions) writeSession(sessionsDir, s);
    const rx = scratch.receiver(await startGrpcReceiver());
    // The key comes from a headers file (the documented way), not the environment.
    const headers = join(work, "headers");
    writeFileSync(headers, "# test\nx-api-key=SECRET-grpc-key\n");
    chmodSync(headers, 0o600);
    const args = [...onceArgs(work, sessionsDir), "--headers-file", headers];
    const { OTEL_EXPORTER_OTLP_HEADERS: _fromEnv, ...env } = grpcEnv(rx.url);

    const r1 = await runCliAsync(args, env);
    expect(r1.status, r1.stderr).toBe(0);
    expect(sumBy(cumulativeTotals(rx.points, "cline.token.usage"), "type")).toEqual(truthByType(sessions));
    const r2 = await runCliAsync(args, env);
    expect(r2.status, r2.stderr).toBe(0);
    expect(rx.requests.filter((r) => r.code === status.OK)).toHaveLength(2);
    expect(rx.requests.every((r) => r.metadata["x-api-key"] === "SECRET-grpc-key")).toBe(true);
    const ours = rx.points.filter((p) => p.scope === "cline-otel");
    expect(new Set(ours.map((p) => p.startNs)).size).toBe(1);
    expect(sumBy(cumulativeTotals(rx.points, "cline.token.usage"), "type")).toEqual(truthByType(sessions));

    const late = session(9, 2);
    writeSession(sessionsDir, late);
    const r3 = await runCliAsync(args, env);
    expect(r3.status, r3.stderr).toBe(0);
    expect(sumBy(cumulativeTotals(rx.points, "cline.token.usage"), "type")).toEqual(
      truthByType([...sessions, late]),
    );
    for (const r of [r1, r2, r3]) expect(r.stderr + r.stdout).not.toContain("SECRET");
  }, 90_000);

  it("UNAVAILABLE: exit 1 naming the endpoint, never the key; the next run delivers everything", async () => {
    const { work, sessionsDir } = scratch.withSessions("grpc-down-");
    const sessions = [session(0, 2), session(1, 3)];
    for (const s of sessions) writeSession(sessionsDir, s);
    const rx = scratch.receiver(await startGrpcReceiver({ policy: () => status.UNAVAILABLE }));
    const args = onceArgs(work, sessionsDir);
    const env = grpcEnv(rx.url);
    const down = await runCliAsync(args, env);
    expect(down.status).toBe(1);
    expect(down.stderr).toContain(`could not deliver metrics to ${rx.url} (otlp): gRPC 14 UNAVAILABLE`);
    expect(down.stderr).toContain("the next run sends it");
    expect(down.stderr).not.toContain("SECRET");
    expect(rx.points).toEqual([]);
    rx.setStatus(() => status.OK);
    const up = await runCliAsync(args, env);
    expect(up.status, up.stderr).toBe(0);
    expect(sumBy(cumulativeTotals(rx.points, "cline.token.usage"), "type")).toEqual(truthByType(sessions));
  }, 90_000);
});
