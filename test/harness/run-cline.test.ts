import { describe, expect, it } from "vitest";
import {
  childEnv,
  clineBin,
  redact,
  resolveClinePaths,
  stripAnsi,
} from "../../fixtures/harness/run-cline.ts";
import { cline2Bin, taskChildEnv, taskDataDir } from "../../fixtures/harness/run-cline-tasks.ts";

describe("clineBin", () => {
  it("defaults to the install-cline.sh location and honours CLINE_OTEL_CLINE_BIN", () => {
    expect(clineBin({})).toBe("/opt/cline-3.0.65/node_modules/.bin/cline");
    expect(clineBin({ CLINE_OTEL_CLINE_BIN: "/x/cline" })).toBe("/x/cline");
  });
});

describe("cline2Bin / taskChildEnv (the 2.18.0 task-format runner)", () => {
  it("defaults to the install-cline.sh location and honours CLINE_OTEL_CLINE2_BIN", () => {
    expect(cline2Bin({})).toBe("/opt/cline-2.18.0/node_modules/.bin/cline");
    expect(cline2Bin({ CLINE_OTEL_CLINE2_BIN: "/y/cline", CLINE_OTEL_CLINE_BIN: "/x/cline" })).toBe(
      "/y/cline",
    );
    expect(taskDataDir("/h")).toBe("/h/.cline/data");
  });

  it("inherits nothing but PATH", () => {
    const env = taskChildEnv("/h");
    expect(Object.keys(env).sort()).toEqual(["HOME", "LANG", "PATH", "TERM"]);
    expect(env.HOME).toBe("/h");
  });
});

describe("resolveClinePaths (docs/cline-format.md §2.1)", () => {
  it("defaults below <home>/.cline/data and writes no captures without CLINE_DATA_DIR", () => {
    const p = resolveClinePaths({ HOME: "/h" });
    expect(p.sessionsDir).toBe("/h/.cline/data/sessions");
    expect(p.dbDir).toBe("/h/.cline/data/db");
    expect(p.providersPath).toBe("/h/.cline/data/settings/providers.json");
    expect(p.hubDiscoveryPath).toBe("/h/.cline/data/locks/hub/production.json");
    expect(p.captureDir).toBeUndefined();
  });

  it("applies CLINE_DIR, CLINE_DATA_DIR and CLINE_SESSION_DATA_DIR at their own levels", () => {
    expect(resolveClinePaths({ HOME: "/h", CLINE_DIR: "/c" }).dataDir).toBe("/c/data");
    const d = resolveClinePaths({ HOME: "/h", CLINE_DIR: "/c", CLINE_DATA_DIR: "/d" });
    expect([d.sessionsDir, d.dbDir, d.captureDir]).toEqual([
      "/d/sessions",
      "/d/db",
      "/d/provider-request-captures",
    ]);
    const s = resolveClinePaths({ HOME: "/h", CLINE_SESSION_DATA_DIR: "/s", CLINE_CAPTURE_DIR: "/cap" });
    expect([s.sessionsDir, s.dbDir, s.captureDir]).toEqual(["/s", "/h/.cline/data/db", "/cap"]);
  });

  it("treats empty variables as unset and needs HOME", () => {
    expect(resolveClinePaths({ HOME: "/h", CLINE_DATA_DIR: "" }).dataDir).toBe("/h/.cline/data");
    expect(() => resolveClinePaths({})).toThrow(/HOME/);
  });
});

describe("childEnv", () => {
  it("starts from a minimal base: no inherited CLINE_* or API keys, local backend, own hub port", () => {
    process.env.CLINE_OTEL_TEST_LEAK = "leak";
    try {
      const env = childEnv("/home/x", 4321, { CLINE_DATA_DIR: "/d", SKIPPED: undefined });
      expect(env.CLINE_OTEL_TEST_LEAK).toBeUndefined();
      expect(env).toMatchObject({
        HOME: "/home/x",
        CLINE_NO_AUTO_UPDATE: "1",
        CLINE_SESSION_BACKEND_MODE: "local",
        CLINE_HUB_PORT: "4321",
        CLINE_DATA_DIR: "/d",
      });
      expect("SKIPPED" in env).toBe(false);
    } finally {
      delete process.env.CLINE_OTEL_TEST_LEAK;
    }
  });
});

describe("redact / stripAnsi", () => {
  it("removes every occurrence of a secret", () => {
    expect(redact("k=sk-1 and sk-1", ["sk-1", ""])).toBe("k=[REDACTED] and [REDACTED]");
  });

  it("strips colour, cursor and OSC sequences", () => {
    expect(stripAnsi("\u001b[32mok\u001b[0m \u001b[?25h\u001b]0;title\u0007done")).toBe("ok done");
  });
});
