/**
 * Bad OTLP input as a user meets it: `cline-otel run` exits 2 with one line naming the variable,
 * flag or file and what is accepted, and never echoes a secret.
 */
import { chmodSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { runCli } from "../helpers/cli.ts";

// Made at load time: the table below names files in it.
const work = mkdtempSync(join(tmpdir(), "otlp-cli-errors-"));
afterAll(() => rmSync(work, { recursive: true, force: true }));

const SECRET = "hcaik_SECRET_0123456789";

function run(env: Record<string, string>, extra: string[] = []) {
  const args = ["run", "--once", "--sessions-dir", join(work, "s"), "--db-dir", join(work, "db")];
  return runCli([...args, "--state-dir", join(work, "state"), ...extra], {
    OTEL_METRICS_EXPORTER: "otlp",
    ...env,
  });
}

function headersFile(name: string, text: string, mode: number): string {
  const p = join(work, name);
  writeFileSync(p, text);
  chmodSync(p, mode);
  return p;
}

describe("cline-otel run with bad OTLP settings exits 2", () => {
  it.each([
    [
      "an unknown protocol",
      () => ({ env: { OTEL_EXPORTER_OTLP_METRICS_PROTOCOL: "thrift" }, extra: [] as string[] }),
      'cline-otel: OTEL_EXPORTER_OTLP_METRICS_PROTOCOL is "thrift"; accepted values: grpc, http/protobuf, http/json',
    ],
    [
      "an unreadable certificate",
      () => ({
        env: {
          OTEL_EXPORTER_OTLP_ENDPOINT: "https://c:4318",
          OTEL_EXPORTER_OTLP_CERTIFICATE: "/nonexistent/ca.pem",
        },
        extra: [],
      }),
      "cline-otel: OTEL_EXPORTER_OTLP_CERTIFICATE names /nonexistent/ca.pem, which cannot be read (ENOENT); give a readable PEM file",
    ],
    [
      "a malformed header list",
      () => ({ env: { OTEL_EXPORTER_OTLP_HEADERS: SECRET }, extra: [] }),
      "cline-otel: OTEL_EXPORTER_OTLP_HEADERS has an item without key=value; use key1=value1,key2=value2",
    ],
    [
      "a headers file others can read",
      () => {
        const p = headersFile("readable", `x-honeycomb-team=${SECRET}\n`, 0o644);
        return { env: { CLINE_OTEL_HEADERS_FILE: p }, extra: [] };
      },
      `cline-otel: CLINE_OTEL_HEADERS_FILE (${join(work, "readable")}) holds secrets but group or others may access it (mode 0644); run: chmod 600 ${join(work, "readable")}`,
    ],
    [
      "a malformed headers file line",
      () => {
        const p = headersFile("malformed", `# key\nx-a=1\n${SECRET}\n`, 0o600);
        return { env: {}, extra: ["--headers-file", p] };
      },
      `cline-otel: --headers-file (${join(work, "malformed")}) line 3 is not name=value (the line is not shown: it may hold a secret); write one name=value per line, # for comments`,
    ],
    [
      "a missing headers file",
      () => ({ env: { CLINE_OTEL_HEADERS_FILE: join(work, "absent") }, extra: [] }),
      `cline-otel: CLINE_OTEL_HEADERS_FILE (${join(work, "absent")}) cannot be read (ENOENT); create it with name=value lines and chmod 600 it`,
    ],
  ])("%s", (_what, setup, message) => {
    const { env, extra } = setup();
    const r = run(env, extra);
    expect(r.status, r.stderr).toBe(2);
    expect(r.stderr.trim()).toBe(message);
    expect(r.stderr + r.stdout).not.toContain(SECRET);
  });
});

describe("commands that never export ignore exporter settings", () => {
  const broken = {
    OTEL_METRICS_EXPORTER: "otlp",
    OTEL_EXPORTER_OTLP_PROTOCOL: "thrift",
    OTEL_EXPORTER_OTLP_CERTIFICATE: "/nonexistent/ca.pem",
    CLINE_OTEL_HEADERS_FILE: join(work, "absent"),
  };
  const dirs = ["--sessions-dir", join(work, "s"), "--db-dir", join(work, "db")];

  it("`report` and `paths` run with a broken OTLP setup that `run` refuses", () => {
    const report = runCli(["report", "--json", ...dirs, "--state-dir", join(work, "state-report")], broken);
    expect(report.status, report.stderr).toBe(0);
    expect(JSON.parse(report.stdout).totals).toMatchObject({ events: 0 });
    const paths = runCli(["paths", "--json", ...dirs], broken);
    expect(paths.status, paths.stderr).toBe(0);
    const refused = run(broken);
    expect(refused.status).toBe(2);
  });
});
