/**
 * `cline.client` of SDK sessions: the mapping of a session's `source` (client.ts), and discovery
 * passing it to the parser from the index row, the parent's row, or the sidecar.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { clientOfSource, KNOWN_SOURCES } from "../../../src/adapter/cline/client.ts";
import { discoverCline } from "../../../src/adapter/cline/discover.ts";
import { collectDocument } from "../../../src/adapter/cline/document.ts";
import { resolveClinePaths } from "../../../src/adapter/cline/paths.ts";
import { type MsgSpec, makeTree } from "../../helpers/cline-tree.ts";

const metrics = { inputTokens: 10, outputTokens: 2, cacheReadTokens: 0, cacheWriteTokens: 0 };
/** An assistant message with usage (one event). */
const m = (id: string): MsgSpec => ({ id, metrics });

describe("clientOfSource", () => {
  it("keeps the SDK's known sources, lower-cased and trimmed", () => {
    expect(clientOfSource("vscode")).toEqual({ client: "vscode" });
    expect(clientOfSource("JetBrains")).toEqual({ client: "jetbrains" });
    expect(clientOfSource(" cli ")).toEqual({ client: "cli" });
    for (const s of KNOWN_SOURCES) expect(clientOfSource(s.toUpperCase())).toEqual({ client: s });
  });

  it("takes an empty or missing source as the CLI's", () => {
    for (const s of [null, undefined, "", "  "]) expect(clientOfSource(s)).toEqual({ client: "cli" });
  });

  it("labels anything else `unknown`, with a sanitized, bounded value to report", () => {
    expect(clientOfSource("emacs")).toEqual({ client: "unknown", unexpected: "emacs" });
    expect(clientOfSource('a"b\n{c}')).toEqual({ client: "unknown", unexpected: "a?b??c?" });
    const long = clientOfSource("x".repeat(10_000));
    expect(long.client).toBe("unknown");
    expect(long.unexpected).toBe(`${"x".repeat(32)}...`);
  });
});

describe("discovery's client hint", () => {
  let dir: string;
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), "cline-client-"));
  });
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  async function clientsOfEvents(tree: ReturnType<typeof makeTree>) {
    const found = await discoverCline(resolveClinePaths({}, {}, tree.home));
    const byDoc: Record<string, string[]> = {};
    for (const source of found.sources) {
      const o = await collectDocument(source);
      if (o.status !== "read") throw new Error(`${source.path}: ${o.status}`);
      byDoc[source.path.slice(tree.sessionsDir.length + 1)] = o.events.map((e) => e.client ?? "(none)");
    }
    return { byDoc, problems: found.problems };
  }

  it("gives the events the index row's source, a sub-agent its parent's, an unindexed session its sidecar's", async () => {
    const tree = makeTree(join(dir, "home"), [
      {
        id: "v1",
        cwd: "/p",
        source: "vscode",
        messages: [m("m1"), m("m2")],
        subagents: { a1: [m("x")] },
      },
      { id: "c1", cwd: "/p", messages: [m("m1")] },
      { id: "j1", cwd: "/p", source: "JetBrains", indexed: false, messages: [m("m1")] },
      { id: "n1", cwd: "/p", indexed: false, sidecar: false, messages: [m("m1")] },
    ]);
    const { byDoc, problems } = await clientsOfEvents(tree);
    expect(byDoc).toEqual({
      "v1/v1.messages.json": ["vscode", "vscode"],
      "v1/a1.messages.json": ["vscode"],
      "c1/c1.messages.json": ["cli"],
      "j1/j1.messages.json": ["jetbrains"],
      "n1/n1.messages.json": ["cli"],
    });
    expect(problems).toEqual([]);
  });

  it("counts an unexpected source as `unknown` and reports it once", async () => {
    const tree = makeTree(join(dir, "home"), [
      { id: "e1", cwd: "/p", source: "emacs-42", messages: [m("m1")], subagents: { a1: [m("x")] } },
      { id: "e2", cwd: "/p", source: "emacs-42", indexed: false, messages: [m("m1")] },
    ]);
    const { byDoc, problems } = await clientsOfEvents(tree);
    expect(Object.values(byDoc).flat()).toEqual(["unknown", "unknown", "unknown"]);
    expect(problems.map((p) => p.code)).toEqual(["unknown-session-source"]);
    expect(problems[0]?.detail).toContain('"emacs-42"');
    expect(problems[0]?.detail).toContain("2 more documents");
  });
});
