/**
 * The idle daemon holds each document's path once (docs/performance.md, "One string per path"):
 * its walk, the sources it discovered (from the index or the walk), the checkpoints it keeps
 * between sweeps and the loop's set of known paths all share one string per path. Before, a
 * document the index names had three (the walk's, the index row's, the checkpoint row's) and a
 * fourth object in front of the walk's (a concatenation), ~4 x 120 bytes at 38,888 documents.
 *
 * Measured on the real daemon: `--heapsnapshot-signal` once its second pass (the first idle one)
 * is logged, then every string in the heap whose value is a document's path is counted.
 */
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { makeTree, type SessionSpec } from "../helpers/cline-tree.ts";
import { startDaemon } from "./helpers/cli.ts";

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

const metrics = { inputTokens: 10, outputTokens: 5, cacheReadTokens: 0, cacheWriteTokens: 0 };
const session = (i: number, indexed: boolean): SessionSpec => ({
  id: `17960000000${String(i).padStart(2, "0")}_held${i}`,
  cwd: "/home/dev/src/held-paths",
  messages: [{ id: `m${i}`, metrics, tools: ["read_file"] }],
  ...(i === 0 ? { subagents: { agent_a: [{ id: "s0", metrics }] } } : {}),
  indexed,
});

interface Snapshot {
  snapshot: { meta: { node_fields: string[]; node_types: [string[]] } };
  nodes: number[];
  strings: string[];
}

/** How many string objects (flat, concatenated or sliced) in the heap hold each of `values`. */
function stringCopies(file: string, values: readonly string[]): Map<string, number> {
  const snap = JSON.parse(readFileSync(file, "utf8")) as Snapshot;
  const fields = snap.snapshot.meta.node_fields;
  const types = snap.snapshot.meta.node_types[0];
  const width = fields.length;
  const at = { type: fields.indexOf("type"), name: fields.indexOf("name") };
  const stringTypes = new Set(
    ["string", "concatenated string", "sliced string"].map((t) => types.indexOf(t)),
  );
  const wanted = new Map<number, string>();
  snap.strings.forEach((s, i) => {
    if (values.includes(s)) wanted.set(i, s);
  });
  const copies = new Map(values.map((v) => [v, 0]));
  for (let n = 0; n < snap.nodes.length; n += width) {
    if (!stringTypes.has(snap.nodes[n + at.type] as number)) continue;
    const v = wanted.get(snap.nodes[n + at.name] as number);
    if (v !== undefined) copies.set(v, (copies.get(v) ?? 0) + 1);
  }
  return copies;
}

describe("the idle daemon's heap: one string per document path", () => {
  it("walk, index sources, held checkpoints and the loop's known paths share each path", async () => {
    const work = mkdtempSync(join(tmpdir(), "e2e-held-paths-"));
    const snaps = join(work, "snapshots");
    mkdirSync(snaps);
    try {
      // Indexed sessions (their sources carry the index's path) and unindexed ones (the walk's).
      const sessions = [0, 1, 2, 3, 4, 5].map((i) => session(i, i < 4));
      const tree = makeTree(join(work, "home"), sessions);
      const docs = sessions.flatMap((s) => {
        const dir = join(tree.sessionsDir, s.id);
        const own = join(dir, `${s.id}.messages.json`);
        return s.subagents === undefined ? [own] : [own, join(dir, "agent_a.messages.json")];
      });
      const d = startDaemon(["run", "--cline-dir", tree.clineDir, "--state-dir", join(work, "state")], {
        HOME: tree.home,
        OTEL_METRICS_EXPORTER: "none",
        CLINE_OTEL_LOG_LEVEL: "debug",
        NODE_OPTIONS: `--heapsnapshot-signal=SIGUSR2 --diagnostic-dir=${snaps}`,
      });
      const t0 = performance.now();
      // The second pass is the first idle one: the checkpoints are loaded and held from it on.
      while (!d.log().includes("pass: nothing new")) {
        if (performance.now() - t0 > 30_000) throw new Error(`no idle pass in 30 s:\n${d.log()}`);
        await sleep(20);
      }
      expect(d.log()).toContain(`pass: ${docs.length} of ${docs.length} documents read`);
      // The snapshot is written on the main thread; the SIGTERM after it is handled once it is done.
      d.child.kill("SIGUSR2");
      await sleep(200);
      d.child.kill("SIGTERM");
      const done = await d.done;
      expect(done.status, done.stderr).toBe(0);
      const [file] = readdirSync(snaps).filter((f) => f.endsWith(".heapsnapshot"));
      expect(file, `no heap snapshot in ${snaps}`).toBeDefined();
      const copies = stringCopies(join(snaps, file as string), docs);
      console.log(`held copies of each document path: ${[...copies.values()].join(" ")}`);
      for (const [path, n] of copies) expect(n, path).toBe(1);
    } finally {
      rmSync(work, { recursive: true, force: true });
    }
  }, 60_000);
});
