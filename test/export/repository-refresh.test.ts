/**
 * Issue 24: a workspace's remote added and branch switched while the daemon runs show on the
 * events exported next (the repository cache looks at the git files again after each pass),
 * credentials still stripped; what was exported before keeps what it was sent with.
 */
import {
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  renameSync,
  rmSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { createClineTasksAdapter } from "../../src/adapter/cline-tasks/adapter.ts";
import { CollectorLoop } from "../../src/collector/loop.ts";
import { ExportPipeline } from "../../src/export/pipeline.ts";
import { Ledger } from "../../src/ledger/ledger.ts";
import { createLogger } from "../../src/util/log.ts";
import { settledRequests, writeHistory, writeTask } from "../adapter/cline-tasks/helpers.ts";
import { exportTestConfig } from "./helpers/config.ts";
import { priceOf } from "./helpers/expected.ts";
import { type Receiver, startReceiver } from "./helpers/otlp-receiver.ts";

const TOKEN = "glpat-REFRESHsecret13579";
const cleanup: (() => Promise<unknown> | unknown)[] = [];
afterEach(async () => {
  for (const f of cleanup.splice(0).reverse()) await f();
});

async function until(what: string, cond: () => boolean, ms = 5000): Promise<void> {
  const t0 = Date.now();
  while (!cond()) {
    if (Date.now() - t0 > ms) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 10));
  }
}

describe("repository attributes under a running loop", () => {
  it("a remote added and a branch switched reach the next events; the token never leaves", async () => {
    const work = mkdtempSync(join(tmpdir(), "cline-otel-vcs-refresh-"));
    cleanup.push(() => rmSync(work, { recursive: true, force: true }));
    const repo = join(work, "widgets");
    const git = join(repo, ".git");
    mkdirSync(git, { recursive: true });
    // As git writes them: a lock file renamed into place.
    const gitWrite = (name: string, text: string) => {
      writeFileSync(join(git, `${name}.lock`), text);
      renameSync(join(git, `${name}.lock`), join(git, name));
    };
    gitWrite("config", "[core]\n\tbare = false\n");
    gitWrite("HEAD", "ref: refs/heads/main\n");
    const data = join(work, "data");
    const id = "1796000000001";
    writeHistory(data, [{ id, cwdOnTaskInitialization: repo }]);
    writeTask(data, id, settledRequests(1));

    const rx: Receiver = await startReceiver();
    cleanup.push(() => rx.close());
    const ledger = Ledger.open(join(work, "state"));
    cleanup.push(() => ledger.close());
    const logs: string[] = [];
    const cfg = exportTestConfig({
      OTEL_EXPORTER_OTLP_ENDPOINT: rx.baseUrl,
      OTEL_LOGS_EXPORTER: "otlp",
      CLINE_OTEL_REPOSITORY: "true",
    });
    const pipeline = await ExportPipeline.start(cfg.export, ledger, {
      logger: createLogger("debug", (l) => logs.push(l)),
      priceOf,
      serviceVersion: "9.9.9",
    });
    cleanup.push(() => pipeline.shutdown());
    const adapter = createClineTasksAdapter([
      { path: data, client: "cli", product: "test", foundBy: "test" },
    ]);
    const loop = new CollectorLoop(adapter, ledger, {
      pollIntervalMs: 600_000,
      sweepIntervalMs: 600_000,
      logger: createLogger("debug", (l) => logs.push(l)),
      watch: { plans: adapter.watchPlans ?? [] },
      onPass: (r) => pipeline.recordPass(r),
    });
    cleanup.push(() => loop.stop());
    loop.start();
    await until("the first request", () => ledger.counts().events === 1);
    await loop.idle();
    expect(await pipeline.flush()).toEqual({ ok: true });
    const first = rx.logs.filter((l) => l.attributes["cline.project"] === repo);
    expect(first.length).toBeGreaterThan(0);
    for (const l of first) {
      expect(l.attributes["vcs.ref.head.name"]).toBe("main");
      expect(l.attributes).not.toHaveProperty("vcs.repository.url.full");
    }
    const seen = rx.logs.length;

    gitWrite(
      "config",
      `[remote "origin"]\n\turl = https://ci:${TOKEN}@gitlab.example.com/acme/widgets.git\n`,
    );
    gitWrite("HEAD", "ref: refs/heads/feature/refresh\n");
    writeTask(data, id, settledRequests(2));
    await until("the second request", () => ledger.counts().events === 2);
    await loop.idle();
    expect(await pipeline.flush()).toEqual({ ok: true });
    const next = rx.logs.slice(seen).filter((l) => l.attributes["cline.project"] === repo);
    expect(next.length).toBeGreaterThan(0);
    for (const l of next) {
      expect(l.attributes).toMatchObject({
        "vcs.ref.head.name": "feature/refresh",
        "vcs.repository.url.full": "https://gitlab.example.com/acme/widgets",
        "vcs.repository.name": "widgets",
        "vcs.owner.name": "acme",
      });
    }
    const json = JSON.stringify([rx.points, rx.logs], (_k, v) => (typeof v === "bigint" ? String(v) : v));
    expect(json).not.toContain(TOKEN);
    expect(logs.join("\n")).not.toContain(TOKEN);
    for (const f of readdirSync(join(work, "state")))
      expect(readFileSync(join(work, "state", f)).includes(TOKEN)).toBe(false);
    // Read-only: git's own files only.
    expect(readdirSync(git).sort()).toEqual(["HEAD", "config"]);
  });
});
