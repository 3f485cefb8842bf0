import { describe, expect, it } from "vitest";
import { resolveCaptureDirs } from "../../src/adapter/cline/captures/paths.ts";
import { resolveClinePaths } from "../../src/adapter/cline/paths.ts";
import { resolveConfig } from "../../src/config/config.ts";
import { envStr } from "../../src/config/env.ts";

describe("envStr: the one reading of an environment variable", () => {
  it("trims, and treats empty or blank as unset", () => {
    expect(envStr({ A: "  x  " }, "A")).toBe("x");
    expect(envStr({ A: "" }, "A")).toBeUndefined();
    expect(envStr({ A: " \t" }, "A")).toBeUndefined();
    expect(envStr({}, "A")).toBeUndefined();
  });

  it("Cline's path variables, the capture dir and our own variables are all read the same way", () => {
    const env = {
      CLINE_DIR: " /c ",
      CLINE_SESSION_DATA_DIR: "  ",
      CLINE_CAPTURE_DIR: " /caps ",
      CLINE_OTEL_STATE_DIR: " /state ",
    };
    const cline = resolveClinePaths({}, env, "/home/u", "/");
    expect(cline.root.path).toBe("/c");
    expect(cline.sessions.path).toBe("/c/data/sessions"); // blank is unset, as in Cline's `a || b`
    expect(resolveCaptureDirs({}, env, cline, "/").map((d) => d.path)).toContain("/caps");
    const cfg = resolveConfig({ sessionsDir: "/s", dbDir: "/d" }, env, "/home/u", "/");
    expect(cfg.stateDir.path).toBe("/state");
  });
});
