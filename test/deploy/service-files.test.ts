import { spawnSync } from "node:child_process";
import {
  chmodSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from "node:fs";
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

/** A fake home with ~/.config/cline-otel, and a fake `cline-otel` on PATH printing what it got. */
function fakeHome(): { home: string; envFile: string; path: string; dispose(): void } {
  const home = mkdtempSync(join(tmpdir(), "cline-otel-home-"));
  mkdirSync(join(home, ".config", "cline-otel"), { recursive: true });
  const bin = join(home, "bin");
  mkdirSync(bin);
  writeFileSync(
    join(bin, "cline-otel"),
    '#!/bin/sh\necho "args=$*"\necho "headers=$OTEL_EXPORTER_OTLP_HEADERS"\necho "endpoint=$OTEL_EXPORTER_OTLP_ENDPOINT"\n',
  );
  chmodSync(join(bin, "cline-otel"), 0o755);
  return {
    home,
    envFile: join(home, ".config", "cline-otel", "env"),
    path: `${bin}:/usr/bin:/bin`,
    dispose: () => rmSync(home, { recursive: true, force: true }),
  };
}

function writeMode(path: string, text: string, mode: number): void {
  writeFileSync(path, text);
  chmodSync(path, mode);
}

const SECRET = "hcaik_SECRET_0123456789";

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

  it("reads the OTEL_* settings from ~/.config/cline-otel/env and refuses to start while others may read it", () => {
    expect(keys.get("Service.EnvironmentFile")).toEqual(["-%h/.config/cline-otel/env"]);
    const pre = one("Service.ExecStartPre") ?? "";
    const m = /^\/bin\/sh -c '([^']*)' (\S+) %h(\/\.config\/cline-otel\/env)$/.exec(pre);
    expect(m, pre).not.toBeNull();
    // systemd's unescaping: $$ is a literal $, %h the home directory.
    const script = (m?.[1] ?? "").replaceAll("$$", "$");
    expect(script).not.toMatch(/%/);
    const h = fakeHome();
    try {
      const check = () =>
        spawnSync("/bin/sh", ["-c", script, m?.[2] ?? "", `${h.home}${m?.[3]}`], { encoding: "utf8" });
      expect(check().status).toBe(0); // no file: nothing to refuse (the EnvironmentFile is optional)
      writeMode(h.envFile, `OTEL_EXPORTER_OTLP_HEADERS=x-honeycomb-team=${SECRET}\n`, 0o600);
      expect(check().status).toBe(0);
      for (const mode of [0o640, 0o604, 0o620, 0o644]) {
        chmodSync(h.envFile, mode);
        const r = check();
        expect(r.status, mode.toString(8)).toBe(1);
        expect(r.stderr).toContain(`run: chmod 600 ${h.envFile}`);
        expect(r.stderr + r.stdout).not.toContain(SECRET);
      }
      // A symlink is judged by the file it points to.
      const target = join(h.home, "shared-env");
      writeMode(target, "A=1\n", 0o644);
      rmSync(h.envFile);
      symlinkSync(target, h.envFile);
      expect(check().status).toBe(1);
    } finally {
      h.dispose();
    }
  });

  it("runs with glibc's allocator set to give memory back (two arenas, a fixed mmap threshold), as the Dockerfile does", () => {
    const env = keys.get("Service.Environment") ?? [];
    expect(env).toEqual(expect.arrayContaining(["MALLOC_ARENA_MAX=2", "MALLOC_MMAP_THRESHOLD_=131072"]));
    const dockerfile = readFileSync(join(REPO, "Dockerfile"), "utf8");
    expect(dockerfile).toMatch(/^\s+MALLOC_ARENA_MAX=2 \\$/m);
    expect(dockerfile).toMatch(/^\s+MALLOC_MMAP_THRESHOLD_=131072$/m);
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
    const args = plist.ProgramArguments as string[];
    expect(args.slice(0, 2)).toEqual(["/bin/sh", "-c"]);
    expect(args[2]).toMatch(/\nexec cline-otel run$/);
    expect(args.slice(3)).toEqual(["cline-otel-env", "/Users/someone/.config/cline-otel/env"]);
    expect(plist.RunAtLoad).toBe(true);
    expect(plist.KeepAlive).toEqual({ SuccessfulExit: false });
    expect(plist.ProcessType).toBe("Background");
    expect(plist.StandardErrorPath).toBe("/Users/someone/Library/Logs/cline-otel.log");
    const env = plist.EnvironmentVariables as Record<string, string>;
    expect(env.CLINE_OTEL_STATE_DIR).toBe("/Users/someone/.local/state/cline-otel");
    // Every placeholder is replaced by the documented install command; no ~ that launchd would not expand.
    expect(JSON.stringify(plist)).not.toMatch(/__HOME__|~\//);
  });

  it("its wrapper reads ~/.config/cline-otel/env (0600 only) into cline-otel's environment, never echoing a line", () => {
    const h = fakeHome();
    try {
      const installed = text.replaceAll("__HOME__", h.home);
      const parsed = spawnSync(
        "python3",
        ["-c", "import json,plistlib,sys; print(json.dumps(plistlib.loads(sys.stdin.buffer.read())))"],
        { input: installed, encoding: "utf8" },
      );
      if (parsed.error) throw new Error(`python3 is needed to parse the plist: ${parsed.error.message}`);
      const args = (JSON.parse(parsed.stdout) as { ProgramArguments: string[] }).ProgramArguments;
      const run = () =>
        spawnSync(args[0] as string, args.slice(1), {
          encoding: "utf8",
          env: { PATH: h.path, HOME: h.home },
        });

      expect(run()).toMatchObject({ status: 0, stdout: "args=run\nheaders=\nendpoint=\n" });
      writeMode(
        h.envFile,
        `# Honeycomb\n\nOTEL_EXPORTER_OTLP_HEADERS=x-honeycomb-team=${SECRET} x,x-honeycomb-dataset=d\nOTEL_EXPORTER_OTLP_ENDPOINT=https://api.honeycomb.io`,
        0o600,
      );
      expect(run()).toMatchObject({
        status: 0,
        stdout: `args=run\nheaders=x-honeycomb-team=${SECRET} x,x-honeycomb-dataset=d\nendpoint=https://api.honeycomb.io\n`,
      });

      chmodSync(h.envFile, 0o644);
      const open = run();
      expect(open.status).toBe(78);
      expect(open.stdout).toBe("");
      expect(open.stderr).toContain(`run: chmod 600 ${h.envFile}`);
      expect(open.stderr).not.toContain(SECRET);

      for (const bad of [SECRET, `bad key=${SECRET}`, `=${SECRET}`]) {
        writeMode(h.envFile, `A=1\n${bad}\n`, 0o600);
        const r = run();
        expect(r.status, bad).toBe(78);
        expect(r.stdout).toBe("");
        expect(r.stderr).toContain("line 2 is not KEY=value");
        expect(r.stderr).not.toContain(SECRET);
      }
    } finally {
      h.dispose();
    }
  });
});
