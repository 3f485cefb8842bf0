/**
 * The held discovery (src/adapter/cline/held-discovery.ts): the daemon's discovery (no checkpoints
 * handed in) lists the last discovery's very array while nothing it was built from changed, and
 * after any change lists what a new process would.
 */
import { mkdirSync, mkdtempSync, rmSync, utimesSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import Database from "better-sqlite3";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { createClineAdapter } from "../../../src/adapter/cline/adapter.ts";
import { createClineSurfaces } from "../../../src/adapter/cline/captures/collect.ts";
import { sameCompactions, sameWalk } from "../../../src/adapter/cline/held-discovery.ts";
import { cachedIndexReader, readSessionIndex } from "../../../src/adapter/cline/index-db.ts";
import { resolveClinePaths } from "../../../src/adapter/cline/paths.ts";
import type { Adapter, Source } from "../../../src/adapter/types.ts";
import { makeTree, messagesDoc, type Tree, writeSession } from "../../helpers/cline-tree.ts";
import { insertRows, sessionRow } from "./helpers/cline-db.ts";

let dir: string;
let tree: Tree;

beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), "held-discovery-"));
  tree = makeTree(join(dir, "home"), [
    { id: "s1", cwd: "/p1", messages: [{ id: "m1" }] },
    { id: "s2", cwd: "/p2", messages: [{ id: "m1" }], subagents: { a1: [{ id: "x" }] } },
    { id: "u1", cwd: "/unindexed", messages: [{ id: "m1" }], indexed: false },
  ]);
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

const adapterOf = (): Adapter =>
  createClineAdapter(resolveClinePaths({}, {}, tree.home), cachedIndexReader());
/** What a source says, without its identity. */
const view = (sources: readonly Source[]) =>
  sources
    .map((s) => ({ path: s.path, origin: s.origin, hint: s.hint, after: s.after }))
    .sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0));
/** What a new process discovers now. */
const fresh = async () => view((await adapterOf().discover()).sources);
const sidecar = (id: string) => join(tree.sessionsDir, id, `${id}.json`);
/** A file's mtime moved, so that every stat key sees a change whatever the clock's granularity. */
const touch = (path: string, s: number) => utimesSync(path, s, s);
/** An index row for session `id` naming `messagesPath`, checkpointed into sessions.db. */
function indexRow(id: string, messagesPath: string): void {
  const db = new Database(join(tree.dbDir, "sessions.db"));
  insertRows(db, [sessionRow(id, { messages_path: messagesPath })]);
  db.pragma("wal_checkpoint(TRUNCATE)");
  db.close();
}

describe("held discovery", () => {
  it("hands on the last discovery's very array while nothing changed, and lists what a new process would", async () => {
    const a = adapterOf();
    const first = await a.discover();
    expect(first.problems).toEqual([]);
    expect(view(first.sources)).toEqual(await fresh());
    const second = await a.discover();
    expect(second.sources).toBe(first.sources);
    expect(second.problems).toEqual([]);
  });

  it("reads no index when held, and the daemon's surfaces keep no index row between discoveries", async () => {
    let reads = 0;
    const counted = cachedIndexReader((d) => {
      reads++;
      return readSessionIndex(d);
    });
    const paths = resolveClinePaths({}, {}, tree.home);
    const surfaces = createClineSurfaces(paths, [], undefined, {}, counted);
    const first = await surfaces.discover();
    expect(reads).toBe(1);
    // Held: the index's stat keys are the last read's, so it is not read (its rows were let go:
    // a discovery that was not held would read it again).
    expect(view((await surfaces.discover()).sources)).toEqual(view(first.sources));
    expect(reads).toBe(1);
    // The walk changed, the index did not: its rows were let go, so they are read again (a
    // reader that kept them would hand them on without a read).
    writeSession(tree, { id: "n1", cwd: "/new", messages: [{ id: "m1" }], indexed: false });
    const second = await surfaces.discover();
    expect(reads).toBe(2);
    expect(view(second.sources.filter((s) => s.adapterId === "cline"))).toEqual(await fresh());
    // A changed index is never taken for the held one.
    indexRow("n2", join(tree.sessionsDir, "n1", "n1.messages.json"));
    await surfaces.discover();
    expect(reads).toBe(3);
  });

  it("lists a new session folder, a new document and a compaction file at the next discovery", async () => {
    const a = adapterOf();
    const first = await a.discover();
    writeSession(tree, { id: "n1", cwd: "/new", messages: [{ id: "m1" }], indexed: false });
    const second = await a.discover();
    expect(second.sources).not.toBe(first.sources);
    expect(view(second.sources)).toEqual(await fresh());
    expect(view(second.sources).map((s) => s.path)).toContain(
      join(tree.sessionsDir, "n1", "n1.messages.json"),
    );

    writeFileSync(
      join(tree.sessionsDir, "s1", "b7.messages.json"),
      JSON.stringify(messagesDoc("s1__b7", "subagent", [])),
    );
    writeFileSync(join(tree.sessionsDir, "s1", "s1.compaction.json"), "{}");
    touch(join(tree.sessionsDir, "s1"), 1_800_000_000);
    const third = await a.discover();
    expect(view(third.sources)).toEqual(await fresh());
    expect(third.sources.some((s) => s.path === join(tree.sessionsDir, "s1", "s1.compaction.json"))).toBe(
      true,
    );
    // Held again, compaction source and all.
    expect((await a.discover()).sources).toBe(third.sources);
  });

  it("takes an unindexed session's new project from its rewritten sidecar", async () => {
    const a = adapterOf();
    await a.discover();
    writeFileSync(
      sidecar("u1"),
      JSON.stringify({ session_id: "u1", cwd: "/moved/elsewhere", source: "cli" }),
    );
    touch(sidecar("u1"), 1_800_000_000);
    const after = await a.discover();
    const u1 = after.sources.find((s) => s.path.endsWith("u1.messages.json"));
    expect(u1?.hint.project).toBe("/moved/elsewhere");
    expect(view(after.sources)).toEqual(await fresh());
  });

  it("takes an indexed session's new project from a changed index", async () => {
    const a = adapterOf();
    await a.discover();
    const db = new Database(join(tree.dbDir, "sessions.db"));
    db.prepare("UPDATE sessions SET cwd = '/p1/renamed' WHERE session_id = 's1'").run();
    db.pragma("wal_checkpoint(TRUNCATE)");
    db.close();
    touch(join(tree.dbDir, "sessions.db"), 1_800_000_000);
    const after = await a.discover();
    expect(after.sources.find((s) => s.path.endsWith("s1.messages.json"))?.hint.project).toBe("/p1/renamed");
    expect(view(after.sources)).toEqual(await fresh());
  });

  it("is never held when the index names a document outside the walk (its stat is discovery's own)", async () => {
    // A session whose document lives outside the sessions dir: only a stat finds it, and only a
    // stat sees it go; the walk and the index stay the same.
    const outside = join(dir, "elsewhere", "o1");
    mkdirSync(outside, { recursive: true });
    const doc = join(outside, "o1.messages.json");
    writeFileSync(doc, JSON.stringify(messagesDoc("o1", "lead", [{ id: "m1" }])));
    indexRow("o1", doc);
    const a = adapterOf();
    const first = await a.discover();
    expect(first.sources.map((s) => s.path)).toContain(doc);
    rmSync(doc);
    const second = await a.discover();
    expect(second.sources.map((s) => s.path)).not.toContain(doc);
    expect(view(second.sources)).toEqual(await fresh());
  });

  it("is never held after a problem: the index's missing document is found once it appears", async () => {
    // A row names a document outside the walk that is not there yet (a stat said so): the
    // problem is reported at every discovery until the file appears, and then it is listed.
    indexRow("l1", join(dir, "later", "l1", "l1.messages.json"));
    const a = adapterOf();
    const code = async () => (await a.discover()).problems.map((p) => p.code);
    expect(await code()).toContain("index-path-unusable");
    expect(await code()).toContain("index-path-unusable");
    const doc = join(dir, "later", "l1", "l1.messages.json");
    mkdirSync(join(dir, "later", "l1"), { recursive: true });
    writeFileSync(doc, JSON.stringify(messagesDoc("l1", "lead", [{ id: "m1" }])));
    const after = await a.discover();
    expect(after.problems).toEqual([]);
    expect(after.sources.map((s) => s.path)).toContain(doc);
  });
});

describe("sameWalk", () => {
  const w = (path: string, plain = true) => ({ path, plain });
  it("holds for the same plain documents in the same order only", () => {
    expect(sameWalk([w("/a"), w("/b")], [w("/a"), w("/b")])).toBe(true);
    expect(sameWalk([w("/a"), w("/b")], [w("/b"), w("/a")])).toBe(false);
    expect(sameWalk([w("/a")], [w("/a"), w("/b")])).toBe(false);
    // A symlinked folder's document: its target can change under the same name.
    expect(sameWalk([w("/a", false)], [w("/a", false)])).toBe(false);
  });
});

describe("sameCompactions", () => {
  const hint = { rootSessionId: "s" };
  const c = (path: string, after: string, h: object = hint): Source =>
    ({ adapterId: "c", path, origin: "walk", hint: h, after }) as Source;
  it("compares file, document, origin and the very hint", () => {
    expect(sameCompactions([c("/x", "/d")], [c("/x", "/d")])).toBe(true);
    expect(sameCompactions([c("/x", "/d")], [c("/x", "/e")])).toBe(false);
    expect(sameCompactions([c("/x", "/d")], [c("/x", "/d", { rootSessionId: "s" })])).toBe(false);
    expect(sameCompactions([], [c("/x", "/d")])).toBe(false);
  });
});
