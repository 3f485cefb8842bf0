import { spawnSync } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { REPO } from "./support/dashboard.ts";

const UNIT = join(REPO, "docs", "service", "cline-otel.service");
const PLIST = join(REPO, "docs", "service", "com.cline-otel.agent.plist");
const SYSTEMD_ANALYZE = process.env.SYSTEMD_ANALYZE ?? "/usr/bin/systemd-analyze";
const XMLLINT = process.env.XMLLINT ?? "/usr/bin/xmllint";

/** `systemd-analyze verify --user`: exits 0 even on unknown keys, so any output is a failure. */
function verifyUnit(path: string): { status: number | null; output: string } {
  if (!existsSync(SYSTEMD_ANALYZE))
    throw new Error(`${SYSTEMD_ANALYZE} is missing: apt-get install -y systemd`);
  const runtime = mkdtempSync(join(tmpdir(), "cline-otel-xdg-"));
  try {
    // A user manager needs XDG_RUNTIME_DIR, which a CI container does not set.
    const r = spawnSync(SYSTEMD_ANALYZE, ["verify", "--user", path], {
      encoding: "utf8",
      env: { ...process.env, XDG_RUNTIME_DIR: runtime },
    });
    return { status: r.status, output: `${r.stdout}${r.stderr}`.trim() };
  } finally {
    rmSync(runtime, { recursive: true, force: true });
  }
}

/** Parse the unit's `Key=value` lines per section. */
function unitKeys(text: string): Map<string, string[]> {
  const keys = new Map<string, string[]>();
  let section = "";
  for (const raw of text.split("\n")) {
    const line = raw.trim();
    if (line === "" || line.startsWith("#")) continue;
    const s = /^\[(.+)\]$/.exec(line);
    if (s) {
      section = s[1] as string;
      continue;
    }
    const eq = line.indexOf("=");
    const key = `${section}.${line.slice(0, eq)}`;
    keys.set(key, [...(keys.get(key) ?? []), line.slice(eq + 1)]);
  }
  return keys;
}

describe("docs/service/cline-otel.service (systemd --user)", () => {
  const keys = unitKeys(readFileSync(UNIT, "utf8"));
  const one = (k: string) => keys.get(k)?.at(-1);

  it("passes systemd-analyze verify without a single complaint", () => {
    const r = verifyUnit(UNIT);
    expect(r.status, r.output).toBe(0);
    expect(r.output).toBe("");
  });

  it("is a check that can fail (a bad key is reported)", () => {
    const dir = mkdtempSync(join(tmpdir(), "cline-otel-unit-"));
    try {
      const bad = join(dir, "cline-otel.service");
      writeFileSync(bad, readFileSync(UNIT, "utf8").replace("Restart=on-failure", "Restart=sometimes"));
      expect(verifyUnit(bad).output).toMatch(/restart specifier/i);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it("restarts on failure and runs `cline-otel run`", () => {
    expect(one("Service.Restart")).toBe("on-failure");
    expect(one("Service.ExecStart")).toMatch(/cline-otel run$/);
    expect(one("Install.WantedBy")).toBe("default.target");
  });

  it("is hardened yet can read ~/.cline and write only its state dir", () => {
    expect(one("Service.NoNewPrivileges")).toBe("yes");
    expect(one("Service.ProtectSystem")).toBe("strict");
    expect(one("Service.ProtectHome")).toBe("read-only");
    expect(one("Service.ReadWritePaths")).toBe("%S/cline-otel");
    expect(one("Service.StateDirectory")).toBe("cline-otel");
    expect(keys.get("Service.Environment")).toContain("CLINE_OTEL_STATE_DIR=%S/cline-otel");
    // Node's JIT needs W+X pages: this one would crash it.
    expect(keys.has("Service.MemoryDenyWriteExecute")).toBe(false);
  });
});

describe("docs/service/com.cline-otel.agent.plist (launchd)", () => {
  const text = readFileSync(PLIST, "utf8");

  it("is well-formed XML (xmllint)", () => {
    if (!existsSync(XMLLINT)) throw new Error(`${XMLLINT} is missing: apt-get install -y libxml2-utils`);
    const r = spawnSync(XMLLINT, ["--noout", "--nonet", PLIST], { encoding: "utf8" });
    expect(r.status, r.stderr).toBe(0);
  });

  it("parses as a property list (python plistlib, as plutil -lint) with the agent's keys", () => {
    const installed = text.replaceAll("__HOME__", "/Users/someone");
    const r = spawnSync(
      "python3",
      ["-c", "import json,plistlib,sys; print(json.dumps(plistlib.loads(sys.stdin.buffer.read())))"],
      { input: installed, encoding: "utf8" },
    );
    if (r.error) throw new Error(`python3 is needed to parse the plist: ${r.error.message}`);
    expect(r.status, r.stderr).toBe(0);
    const plist = JSON.parse(r.stdout) as Record<string, unknown>;
    expect(plist.Label).toBe("com.cline-otel.agent");
    expect(plist.ProgramArguments).toEqual(["/usr/bin/env", "cline-otel", "run"]);
    expect(plist.RunAtLoad).toBe(true);
    expect(plist.KeepAlive).toEqual({ SuccessfulExit: false });
    expect(plist.ProcessType).toBe("Background");
    expect(plist.StandardErrorPath).toBe("/Users/someone/Library/Logs/cline-otel.log");
    const env = plist.EnvironmentVariables as Record<string, string>;
    expect(env.CLINE_OTEL_STATE_DIR).toBe("/Users/someone/.local/state/cline-otel");
    // Every placeholder is replaced by the documented install command; no ~ that launchd would not expand.
    expect(JSON.stringify(plist)).not.toMatch(/__HOME__|~\//);
  });
});
