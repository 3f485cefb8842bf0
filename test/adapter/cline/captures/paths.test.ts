import { describe, expect, it } from "vitest";
import {
  CAPTURE_SUBDIR,
  captureDedupKey,
  parseCaptureFileName,
  resolveCaptureDirs,
} from "../../../../src/adapter/cline/captures/paths.ts";
import { resolveClinePaths } from "../../../../src/adapter/cline/paths.ts";
import { ConfigError, resolveConfig } from "../../../../src/config/config.ts";

const HOME = "/home/u";
const CWD = "/cwd";

function dirs(
  env: Record<string, string>,
  flags: { captureDir?: string; dataDir?: string; clineDir?: string } = {},
): string[] {
  const cline = resolveClinePaths(flags, env, HOME, CWD);
  return resolveCaptureDirs(flags, env, cline, CWD).map((d) => d.path);
}

describe("resolveCaptureDirs: Cline's rule, our flag, and the resolved data dir", () => {
  const cases: [string, Record<string, string>, Parameters<typeof dirs>[1], string[]][] = [
    // Cline writes nothing here, but looking costs nothing and a --data-dir user's Cline would.
    ["nothing set: only <home>/.cline/data/…", {}, {}, [`/home/u/.cline/data/${CAPTURE_SUBDIR}`]],
    [
      "CLINE_CAPTURE_DIR",
      { CLINE_CAPTURE_DIR: "/caps" },
      {},
      ["/caps", `/home/u/.cline/data/${CAPTURE_SUBDIR}`],
    ],
    [
      "CLINE_DATA_DIR alone: <data>/… once (both rules agree)",
      { CLINE_DATA_DIR: "/d" },
      {},
      [`/d/${CAPTURE_SUBDIR}`],
    ],
    [
      "CLINE_CAPTURE_DIR beats CLINE_DATA_DIR in Cline's rule; the data dir is still looked at",
      { CLINE_CAPTURE_DIR: "/caps", CLINE_DATA_DIR: "/d" },
      {},
      ["/caps", `/d/${CAPTURE_SUBDIR}`],
    ],
    [
      "an empty variable is unset (Cline's `a || b`)",
      { CLINE_CAPTURE_DIR: "", CLINE_DATA_DIR: "/d" },
      {},
      [`/d/${CAPTURE_SUBDIR}`],
    ],
    [
      "--data-dir: Cline then sets CLINE_DATA_DIR itself; our env's CLINE_DATA_DIR is kept too",
      { CLINE_DATA_DIR: "/envdata" },
      { dataDir: "/flagdata" },
      [`/envdata/${CAPTURE_SUBDIR}`, `/flagdata/${CAPTURE_SUBDIR}`],
    ],
    ["CLINE_DIR moves the default data dir only", { CLINE_DIR: "/cl" }, {}, [`/cl/data/${CAPTURE_SUBDIR}`]],
    [
      "relative values resolve against cwd",
      { CLINE_CAPTURE_DIR: "rel/caps" },
      {},
      ["/cwd/rel/caps", `/home/u/.cline/data/${CAPTURE_SUBDIR}`],
    ],
    [
      "--capture-dir first",
      { CLINE_CAPTURE_DIR: "/caps" },
      { captureDir: "/mine" },
      ["/mine", "/caps", `/home/u/.cline/data/${CAPTURE_SUBDIR}`],
    ],
    [
      "CLINE_OTEL_CAPTURE_DIR when no flag",
      { CLINE_OTEL_CAPTURE_DIR: "/ours" },
      {},
      ["/ours", `/home/u/.cline/data/${CAPTURE_SUBDIR}`],
    ],
    [
      "--capture-dir beats CLINE_OTEL_CAPTURE_DIR",
      { CLINE_OTEL_CAPTURE_DIR: "/ours" },
      { captureDir: "/mine" },
      ["/mine", `/home/u/.cline/data/${CAPTURE_SUBDIR}`],
    ],
    [
      "the same dir named twice is listed once",
      { CLINE_OTEL_CAPTURE_DIR: "/d/provider-request-captures", CLINE_DATA_DIR: "/d" },
      {},
      [`/d/${CAPTURE_SUBDIR}`],
    ],
  ];
  it.each(cases)("%s", (_name, env, flags, want) => {
    expect(dirs(env, flags)).toEqual(want);
  });

  it("says where each candidate came from", () => {
    const cline = resolveClinePaths({}, { CLINE_DATA_DIR: "/d" }, HOME, CWD);
    const r = resolveCaptureDirs(
      { captureDir: "/m" },
      { CLINE_CAPTURE_DIR: "/c", CLINE_DATA_DIR: "/d" },
      cline,
      CWD,
    );
    expect(r.map((d) => [d.origin, d.via])).toEqual([
      ["flag", "--capture-dir"],
      ["env", "CLINE_CAPTURE_DIR"],
      ["env", `<CLINE_DATA_DIR>/${CAPTURE_SUBDIR}`],
    ]);
  });

  it("config: exposes them, and refuses a state dir inside a capture dir", () => {
    const c = resolveConfig({ captureDir: "/m" }, { CLINE_OTEL_STATE_DIR: "/state" }, HOME, CWD);
    expect(c.captureDirs.map((d) => d.path)).toEqual(["/m", `/home/u/.cline/data/${CAPTURE_SUBDIR}`]);
    expect(() => resolveConfig({ captureDir: "/m", stateDir: "/m/state" }, {}, HOME, CWD)).toThrow(
      ConfigError,
    );
    expect(() => resolveConfig({ captureDir: " " }, {}, HOME, CWD)).toThrow(/--capture-dir is empty/);
  });
});

describe("parseCaptureFileName", () => {
  it("reads the real CLI's names", () => {
    expect(
      parseCaptureFileName("cap_run_sgKtCP2P_1_b3527fbff0ef0823.ai_sdk_prompt.1.provider-request.json"),
    ).toEqual({ captureId: "cap_run_sgKtCP2P_1_b3527fbff0ef0823", stage: "ai_sdk_prompt", seq: 1 });
    expect(
      parseCaptureFileName("cap_run_-x3ZXE0c_3_ada335c815f5932a.wire_request.12.provider-request.json"),
    ).toEqual({ captureId: "cap_run_-x3ZXE0c_3_ada335c815f5932a", stage: "wire_request", seq: 12 });
  });

  it("takes stage and n from the right, so a captureId may contain dots", () => {
    expect(parseCaptureFileName("my.capture.id.pre_build_for_api.2.provider-request.json")).toEqual({
      captureId: "my.capture.id",
      stage: "pre_build_for_api",
      seq: 2,
    });
  });

  it.each([
    "cap_x.ai_sdk_prompt.1.provider-request.json.tmp",
    "cap_x.ai_sdk_prompt.1.provider-request.json.123.tmp",
    "cap_x.ai_sdk_prompt.provider-request.json",
    "cap_x.ai_sdk_prompt.0.provider-request.json",
    "cap_x.ai_sdk_prompt.01.provider-request.json",
    "cap_x.AI.1.provider-request.json",
    ".ai_sdk_prompt.1.provider-request.json",
    "cap_x.ai_sdk_prompt.1.json",
    "notes.txt",
  ])("rejects %s", (name) => {
    expect(parseCaptureFileName(name)).toBeUndefined();
  });

  it("dedup keys: one per (captureId, stage, n), and no two names spell the same key", () => {
    const a = captureDedupKey({ captureId: "a|b", stage: "wire_request", seq: 1 });
    const b = captureDedupKey({ captureId: "a", stage: "b|wire_request", seq: 1 });
    expect(a).toBe("cline-capture|a%7Cb|wire_request|1");
    expect(a).not.toBe(b);
    expect(captureDedupKey({ captureId: "c", stage: "ai_sdk_prompt", seq: 2 })).toBe(
      "cline-capture|c|ai_sdk_prompt|2",
    );
  });
});
