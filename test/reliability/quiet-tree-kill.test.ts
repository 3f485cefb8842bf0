/**
 * kill -9 around the quiet-tree snapshot (src/adapter/cline/quiet-tree.ts): it vouches only for
 * checkpoints committed before it is written, so a kill inside or after the commit of a changed
 * document, or inside or after the snapshot's own write, loses nothing: the next pass reads what
 * changed, counts nothing twice, and a later one answers from a true snapshot.
 */
import { spawnSync } from "node:child_process";
import { mkdtempSync, rmSync, utimesSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { makeTree, messagesDoc, type Tree } from "../helpers/cline-tree.ts";

const CHILD = join(import.meta.dirname, "quiet-tree-kill-child.ts");
const TSX = pathToFileURL(createRequire(import.meta.url).resolve("tsx")).href;
const M = (i: number) => ({ inputTokens: i, outputTokens: 1, cacheReadTokens: 0, cacheWriteTokens: 0 });

let dir: string;
let tree: Tree;
let state: string;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), "quiet-tree-kill-"));
  tree = makeTree(join(dir, "home"), [
    { id: "s1", cwd: "/p1", messages: [{ id: "m1", metrics: M(1) }] },
    { id: "s2", cwd: "/p2", messages: [{ id: "m1", metrics: M(2) }] },
  ]);
  state = join(dir, "state");
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

type Result = { read: number; unchanged: number; sources: number } | "killed";

/** `n` passes in one child (each with the ledger opened afresh); the last dies at `dieAt`. */
function passes(n: number, dieAt = "never"): Result[] {
  const r = spawnSync(process.execPath, ["--import", TSX, CHILD, tree.home, state, dieAt, String(n)], {
    encoding: "utf8",
  });
  const lived = r.stdout
    .split("\n")
    .filter((l) => l !== "")
    .map((l) => JSON.parse(l) as Result);
  if (r.signal === "SIGKILL") return [...lived, "killed"];
  if (r.status !== 0) throw new Error(`child failed: ${r.stderr}`);
  return lived;
}

const pass = (dieAt = "never"): Result => passes(1, dieAt)[0] as Result;

/** The ledger's events as `<document>|<message>|<input>`, in order (a read of our own file). */
async function events(): Promise<string[]> {
  const { Ledger } = await import("../../src/ledger/ledger.ts");
  const l = Ledger.open(state, { readOnly: true });
  try {
    return [...l.iterateEvents()]
      .map((e) => `${String(e.source_path).split("/").pop()}|${e.message_id}|${e.input}`)
      .sort();
  } finally {
    l.close();
  }
}

/** s1 grown by a message, in place (its folder unchanged), its mtime moved on. */
function grow(): void {
  const p = join(tree.sessionsDir, "s1", "s1.messages.json");
  writeFileSync(
    p,
    JSON.stringify(
      messagesDoc("s1", "lead", [
        { id: "m1", metrics: M(1) },
        { id: "m2", metrics: M(9) },
      ]),
    ),
  );
  const t = Date.now() / 1000 + 5;
  utimesSync(p, t, t);
}

const ALL = ["s1.messages.json|m1|1", "s1.messages.json|m2|9", "s2.messages.json|m1|2"];

describe("kill -9 around the quiet-tree snapshot", () => {
  for (const dieAt of ["checkpoint", "after-commit"]) {
    it(`a changed document's pass killed ${dieAt === "checkpoint" ? "inside its commit" : "after its commit"}`, async () => {
      // The first read, the quiet discovery (writes the snapshot), the snapshot's.
      expect(passes(3)).toMatchObject([{ read: 2 }, { read: 0 }, { read: 0, unchanged: 2 }]);
      grow();
      expect(pass(dieAt)).toBe("killed");
      const next = pass();
      expect(next).toMatchObject({ read: dieAt === "checkpoint" ? 1 : 0 });
      expect(await events()).toEqual(ALL);
      expect(passes(2)[1]).toMatchObject({ read: 0, unchanged: 2 });
      expect(await events()).toEqual(ALL);
    });
  }

  for (const dieAt of ["snapshot", "after-snapshot"]) {
    it(`a quiet pass killed ${dieAt === "snapshot" ? "inside" : "after"} the snapshot's write, then a change`, async () => {
      expect(pass()).toMatchObject({ read: 2 });
      expect(pass(dieAt)).toBe("killed");
      grow();
      expect(pass()).toMatchObject({ read: 1 });
      expect(await events()).toEqual(ALL);
      expect(passes(2)[1]).toMatchObject({ read: 0, unchanged: 2 });
    });
  }
});
