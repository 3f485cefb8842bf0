import { describe, expect, it } from "vitest";
import { parseKeyValueList, resolveConfig } from "../../src/config/config.ts";
import { configErrorOf } from "../helpers/config-error.ts";

const HOME = "/home/u";
const cfg = (env: Record<string, string> = {}, flags: Record<string, unknown> = {}) =>
  resolveConfig(flags, env, HOME, "/cwd");

describe("resolveConfig", () => {
  it("has sensible defaults and is deeply frozen", () => {
    const c = cfg();
    expect(c.stateDir.path).toBe("/home/u/.local/state/cline-otel");
    expect(c.pollIntervalMs).toBe(5000);
    expect(c.watch).toBe(true);
    expect(c.export).toMatchObject({
      exporters: ["otlp"],
      intervalMs: 60_000,
      timeoutMs: 30_000,
      temporality: "cumulative",
      serviceName: "cline-otel",
      includeSessionId: true,
      project: "path",
    });
    expect(c.export.otlp).toMatchObject({
      endpoint: "http://localhost:4318/v1/metrics",
      protocol: "http/protobuf",
    });
    expect(c.export.prometheus).toEqual({ host: "127.0.0.1", port: 9464 });
    expect(Object.isFrozen(c)).toBe(true);
    expect(Object.isFrozen(c.export)).toBe(true);
    expect(Object.isFrozen(c.export.otlp.headers)).toBe(true);
  });

  it("state dir: flag, then CLINE_OTEL_STATE_DIR, then XDG_STATE_HOME", () => {
    expect(cfg({ XDG_STATE_HOME: "/x" }).stateDir.path).toBe("/x/cline-otel");
    expect(cfg({ XDG_STATE_HOME: "/x", CLINE_OTEL_STATE_DIR: "/e" }).stateDir).toMatchObject({
      path: "/e",
      origin: "env",
    });
    expect(cfg({ CLINE_OTEL_STATE_DIR: "/e" }, { stateDir: "rel" }).stateDir).toMatchObject({
      path: "/cwd/rel",
      origin: "flag",
    });
  });

  it("OTLP endpoint: the signal-specific URL is used as is, the base gets /v1/metrics", () => {
    expect(cfg({ OTEL_EXPORTER_OTLP_ENDPOINT: "http://c:4318/" }).export.otlp.endpoint).toBe(
      "http://c:4318/v1/metrics",
    );
    expect(
      cfg({
        OTEL_EXPORTER_OTLP_ENDPOINT: "http://c:4318",
        OTEL_EXPORTER_OTLP_METRICS_ENDPOINT: "https://h/x",
      }).export.otlp.endpoint,
    ).toBe("https://h/x");
  });

  it("headers merge with the signal-specific ones winning, percent-decoded", () => {
    const c = cfg({
      OTEL_EXPORTER_OTLP_HEADERS: "x-honeycomb-team=abc,x-a=1",
      OTEL_EXPORTER_OTLP_METRICS_HEADERS: "x-a=2,x-b=a%20b",
    });
    expect(c.export.otlp.headers).toEqual({ "x-honeycomb-team": "abc", "x-a": "2", "x-b": "a b" });
  });

  it("a malformed header list names the variable but never echoes a value", () => {
    const msg = configErrorOf(() => cfg({ OTEL_EXPORTER_OTLP_HEADERS: "secretkey123" }));
    expect(msg).toContain("OTEL_EXPORTER_OTLP_HEADERS");
    expect(msg).not.toContain("secretkey123");
  });

  it.each([
    [
      { OTEL_METRICS_EXPORTER: "zipkin" },
      /OTEL_METRICS_EXPORTER is "zipkin"; accepted values: otlp, prometheus, console, none/,
    ],
    [
      { OTEL_EXPORTER_OTLP_PROTOCOL: "http" },
      /OTEL_EXPORTER_OTLP_PROTOCOL is "http"; accepted values: grpc, http\/protobuf, http\/json/,
    ],
    [{ OTEL_EXPORTER_OTLP_METRICS_PROTOCOL: "thrift" }, /OTEL_EXPORTER_OTLP_METRICS_PROTOCOL is "thrift"/],
    [
      { OTEL_METRIC_EXPORT_INTERVAL: "soon" },
      /OTEL_METRIC_EXPORT_INTERVAL is "soon"; give a positive number of milliseconds/,
    ],
    [
      { OTEL_EXPORTER_OTLP_METRICS_TEMPORALITY_PREFERENCE: "both" },
      /accepted values: cumulative, delta, lowmemory/,
    ],
    [{ OTEL_EXPORTER_PROMETHEUS_PORT: "99999" }, /OTEL_EXPORTER_PROMETHEUS_PORT/],
    [{ OTEL_EXPORTER_OTLP_ENDPOINT: "not a url" }, /OTEL_EXPORTER_OTLP_ENDPOINT is "not a url", not a URL/],
    [
      { CLINE_OTEL_PROJECT: "full" },
      /CLINE_OTEL_PROJECT is "full"; accepted values: path, basename, hash, none/,
    ],
    [{ CLINE_OTEL_INCLUDE_SESSION_ID: "maybe" }, /CLINE_OTEL_INCLUDE_SESSION_ID/],
    [{ CLINE_OTEL_POLL_INTERVAL: "0" }, /CLINE_OTEL_POLL_INTERVAL is "0"; give a positive number of seconds/],
  ])("%j is refused with a message naming it", (env, re) => {
    expect(configErrorOf(() => cfg(env))).toMatch(re);
  });

  it("flags name themselves in errors and beat the environment", () => {
    expect(configErrorOf(() => cfg({}, { project: "x" }))).toMatch(/^--project is "x"/);
    expect(cfg({ CLINE_OTEL_PROJECT: "hash" }, { project: "none" }).export.project).toBe("none");
    expect(cfg({ CLINE_OTEL_POLL_INTERVAL: "9" }, { pollInterval: "0.5" }).pollIntervalMs).toBe(500);
    expect(cfg({ CLINE_OTEL_INCLUDE_SESSION_ID: "true" }, { sessionId: false }).export.includeSessionId).toBe(
      false,
    );
  });

  it("exporter lists, none, and OTEL_SDK_DISABLED", () => {
    expect(cfg({ OTEL_METRICS_EXPORTER: "otlp, prometheus,otlp" }).export.exporters).toEqual([
      "otlp",
      "prometheus",
    ]);
    expect(cfg({ OTEL_METRICS_EXPORTER: "none" }).export.exporters).toEqual([]);
    expect(cfg({ OTEL_SDK_DISABLED: "true" }).export.exporters).toEqual([]);
  });

  it("lowmemory temporality is delta for counters; export timeout is clamped to the interval", () => {
    expect(cfg({ OTEL_EXPORTER_OTLP_METRICS_TEMPORALITY_PREFERENCE: "LowMemory" }).export.temporality).toBe(
      "delta",
    );
    expect(cfg({ OTEL_METRIC_EXPORT_INTERVAL: "1000" }).export.timeoutMs).toBe(1000);
  });

  it("refuses a state dir inside Cline's tree", () => {
    expect(configErrorOf(() => cfg({ CLINE_OTEL_STATE_DIR: "/home/u/.cline/data/otel" }))).toMatch(
      /inside Cline's/,
    );
  });

  it("empty flag values are refused", () => {
    expect(configErrorOf(() => cfg({}, { clineDir: " " }))).toMatch(/--cline-dir is empty/);
  });
});

describe("parseKeyValueList", () => {
  it("parses service attributes", () => {
    expect(parseKeyValueList("team=platform, deployment.environment=dev", "X")).toEqual({
      team: "platform",
      "deployment.environment": "dev",
    });
  });
});
