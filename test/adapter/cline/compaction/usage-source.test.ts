/**
 * `*.compaction.json` is never a usage source (docs/cline-format.md §14, docs/design.md): the named rule
 * `isUsageSource`, the discovery walk and index that use it, and the collector's own guard.
 * The last test shows what the rule prevents: the agentic compaction file, read as a messages
 * document, would yield the preserved messages' metrics a second time.
 */
import { cpSync, mkdtempSync, readdirSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import Database from "better-sqlite3";
import { afterAll, describe, expect, it } from "vitest";
import { loadGroundTruth } from "../../../../fixtures/harness/ground-truth.ts";
import { collectDocument } from "../../../../src/adapter/cline/adapter.ts";
import { compactionSources } from "../../../../src/adapter/cline/compaction/collect.ts";
import {
  compactionPathFor,
  isCompactionFile,
  isUsageSource,
  messagesPathFor,
} from "../../../../src/adapter/cline/compaction/files.ts";
import { discoverCline } from "../../../../src/adapter/cline/discover.ts";
import { parseMessagesDocument } from "../../../../src/adapter/cline/parser.ts";
import { resolveClinePaths } from "../../../../src/adapter/cline/paths.ts";
import { messagesDocumentSchema } from "../../../../src/adapter/cline/schema.ts";
import type { Source } from "../../../../src/adapter/types.ts";
import { scanFile } from "../../../../src/scan/scanner.ts";

const work = mkdtempSync(join(tmpdir(), "usage-source-"));
afterAll(() => rmSync(work, { recursive: true, force: true }));

const gt = loadGroundTruth("compaction-agentic");
const id = gt.rootSessionIds[0] ?? "";

function copyFixture(name: string) {
  const root = join(work, name);
  cpSync(join(gt.fixtureRoot, "home"), join(root, "home"), { recursive: true });
  const paths = resolveClinePaths({}, {}, join(root, "home"));
  const dir = join(paths.sessions.path, id);
  return { root, paths, dir, compaction: join(dir, `${id}.compaction.json`) };
}

describe("isUsageSource", () => {
  it.each([
    ["/s/1_a/1_a.messages.json", true],
    ["/s/1_a/agent_1_x.messages.json", true],
    ["/s/1_a/helper__Ab_-9z.messages.json", true],
    ["/s/1_a/1_a.compaction.json", false],
    ["/s/1_a/agent_1_x.compaction.json", false],
    ["/s/1_a/1_a.json", false],
    ["/s/1_a/1_a.messages.json.tmp", false],
    ["/s/1_a/.messages.json", false],
    ["/s/1_a/1_a.compaction.json.messages", false],
  ])("%s -> %s", (path, want) => {
    expect(isUsageSource(path)).toBe(want);
  });

  it("pairs a compaction file with its messages document and back", () => {
    expect(compactionPathFor("/s/1_a/1_a.messages.json")).toBe("/s/1_a/1_a.compaction.json");
    expect(messagesPathFor("/s/1_a/1_a.compaction.json")).toBe("/s/1_a/1_a.messages.json");
    expect(isCompactionFile("/s/1_a/1_a.compaction.json")).toBe(true);
    expect(isCompactionFile("/s/1_a/1_a.messages.json")).toBe(false);
  });
});

describe("discovery and collection over a real compacted session", () => {
  it("the fixture really has a compaction file next to the document", () => {
    const { dir } = copyFixture("has");
    expect(readdirSync(dir).sort()).toEqual([`${id}.compaction.json`, `${id}.json`, `${id}.messages.json`]);
  });

  it("discovery (index and walk) offers only the messages document", async () => {
    const { paths } = copyFixture("discover");
    const found = await discoverCline(paths);
    expect(found.sources.map((s) => s.path.split("/").at(-1))).toEqual([`${id}.messages.json`]);
    expect(found.problems).toEqual([]);
  });

  it("an index row whose messages_path names the compaction file is refused (the walk still finds the document)", async () => {
    const { paths, compaction } = copyFixture("index");
    const db = new Database(join(paths.db.path, "sessions.db"));
    db.prepare("UPDATE sessions SET messages_path = ?").run(compaction);
    db.close();
    const found = await discoverCline(paths);
    expect(found.sources.map((s) => [s.origin, s.path.split("/").at(-1)])).toEqual([
      ["walk", `${id}.messages.json`],
    ]);
    expect(found.problems.map((p) => p.code)).toEqual(["index-path-unusable"]);
  });

  it("the collector refuses a compaction file handed to it as a source", async () => {
    const { compaction } = copyFixture("collect");
    const source: Source = { adapterId: "cline", path: compaction, origin: "walk", hint: {} };
    const obs = await collectDocument(source);
    expect(obs.status).toBe("failed");
    if (obs.status === "failed") expect(obs.problem.code).toBe("not-a-usage-source");
  });

  it("what the rule prevents: read as a messages document, the compaction file repeats stored metrics", async () => {
    const { compaction, dir } = copyFixture("hazard");
    const asDoc = parseMessagesDocument(
      (await scanFile(compaction, messagesDocumentSchema)).value,
      join(dir, `${id}.messages.json`),
      {},
    );
    expect(asDoc.events.length).toBeGreaterThan(0);
    const real = parseMessagesDocument(
      (await scanFile(join(dir, `${id}.messages.json`), messagesDocumentSchema)).value,
      join(dir, `${id}.messages.json`),
      {},
    );
    const realOut = new Map(real.events.map((e) => [e.messageId, e.output]));
    // Every event the compaction file would yield is one the document already counts.
    for (const e of asDoc.events) expect(realOut.get(e.messageId)).toBe(e.output);
  });
});

describe("compactionSources", () => {
  const doc = (path: string, origin: "index" | "walk" = "walk"): Source => ({
    adapterId: "cline",
    path,
    origin,
    hint: { project: "/w" },
  });

  it("takes the compaction files the walk listed, with the document's hint, and stats nothing for walked folders", () => {
    const stats: string[] = [];
    const exists = (p: string) => {
      stats.push(p);
      return true;
    };
    const out = compactionSources(
      [
        doc("/s/a/a.messages.json"),
        doc("/s/b/b.messages.json", "index"),
        doc("/s/a/agent_1_x.messages.json"),
      ],
      new Set(["/s/a/a.compaction.json"]),
      "/s",
      exists,
    );
    expect(out).toEqual([
      {
        adapterId: "cline-compaction",
        path: "/s/a/a.compaction.json",
        origin: "walk",
        hint: { project: "/w" },
        // Committed only in a pass whose read of its document did not fail (runPass).
        after: "/s/a/a.messages.json",
      },
    ]);
    expect(stats).toEqual([]);
  });

  it("looks next to an indexed document outside the sessions dir", () => {
    const out = compactionSources([doc("/elsewhere/c/c.messages.json", "index")], new Set(), "/s", (p) =>
      p.endsWith("c.compaction.json"),
    );
    expect(out.map((s) => s.path)).toEqual(["/elsewhere/c/c.compaction.json"]);
  });
});
