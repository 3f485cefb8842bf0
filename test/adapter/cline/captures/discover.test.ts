import { mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import {
  agentRole,
  createSessionResolver,
  listCaptureFiles,
} from "../../../../src/adapter/cline/captures/discover.ts";
import { readSessionIndex } from "../../../../src/adapter/cline/index-db.ts";
import type { ResolvedPath } from "../../../../src/adapter/cline/paths.ts";
import type { Problem } from "../../../../src/adapter/types.ts";
import { makeTree } from "../../../helpers/cline-tree.ts";
import { writeCapture } from "./helpers.ts";

let dir: string;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), "cap-discover-"));
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

const at = (path: string): ResolvedPath => ({ path, origin: "flag", via: "--capture-dir" });

describe("listCaptureFiles", () => {
  it("lists capture files only: *.tmp, foreign files and directories are ignored", () => {
    const caps = join(dir, "caps");
    mkdirSync(caps);
    const a = writeCapture(caps, "cap_a", 1);
    const b = writeCapture(caps, "cap_a", 1, { stage: "wire_request" });
    writeFileSync(join(caps, "cap_b.ai_sdk_prompt.1.provider-request.json.tmp"), "{");
    writeFileSync(join(caps, "cap_c.ai_sdk_prompt.1.provider-request.json.4711.tmp"), "");
    writeFileSync(join(caps, "README.txt"), "x");
    mkdirSync(join(caps, "cap_d.ai_sdk_prompt.1.provider-request.json"));
    const r = listCaptureFiles([at(caps)]);
    expect(r.sources.map((s) => s.path)).toEqual([a, b].sort());
    expect(r.sources.every((s) => s.adapterId === "cline-capture")).toBe(true);
    expect(r.problems).toEqual([]);
    expect(r.complete).toEqual([caps]);
  });

  it("reports a name that ends like a capture but does not parse", () => {
    const caps = join(dir, "caps");
    mkdirSync(caps);
    writeFileSync(join(caps, "weird.provider-request.json"), "{}");
    const r = listCaptureFiles([at(caps)]);
    expect(r.sources).toEqual([]);
    expect(r.problems.map((p) => p.code)).toEqual(["capture-name-unparsed"]);
  });

  it("a capture dir that does not exist is no problem (capture is off): complete, empty", () => {
    const r = listCaptureFiles([at(join(dir, "nope")), at(join(dir, "also", "nope"))]);
    expect(r).toEqual({
      sources: [],
      problems: [],
      complete: [join(dir, "nope"), join(dir, "also", "nope")],
      incomplete: [],
    });
  });

  it("a path that is a file, not a dir, has no captures", () => {
    const f = join(dir, "file");
    writeFileSync(f, "x");
    expect(listCaptureFiles([at(f)]).sources).toEqual([]);
  });

  it("the same dir reached twice (a symlink) is listed once, by its real path", () => {
    const caps = join(dir, "caps");
    mkdirSync(caps);
    writeCapture(caps, "cap_a", 1);
    symlinkSync(caps, join(dir, "link"));
    const r = listCaptureFiles([at(join(dir, "link")), at(caps)]);
    expect(r.sources.map((s) => s.path)).toEqual([join(caps, "cap_a.ai_sdk_prompt.1.provider-request.json")]);
    expect(r.complete).toEqual([caps]);
  });

  it("follows a symlinked capture file, skips a dangling one", () => {
    const caps = join(dir, "caps");
    mkdirSync(caps);
    const real = writeCapture(dir, "cap_real", 1);
    symlinkSync(real, join(caps, "cap_real.ai_sdk_prompt.1.provider-request.json"));
    symlinkSync(join(dir, "gone"), join(caps, "cap_gone.ai_sdk_prompt.1.provider-request.json"));
    expect(listCaptureFiles([at(caps)]).sources.map((s) => s.path)).toEqual([
      join(caps, "cap_real.ai_sdk_prompt.1.provider-request.json"),
    ]);
  });
});

describe("agentRole", () => {
  it.each([
    [{ sessionId: "s", knownSubagent: true, hasTeammates: false }, "subagent"],
    [{ sessionId: "s", knownSubagent: true, hasTeammates: true }, "subagent"],
    [{ sessionId: "s", knownSubagent: false, hasTeammates: false }, "lead"],
    [{ sessionId: "s", knownSubagent: false, hasTeammates: true }, ""],
    [{ sessionId: "", knownSubagent: false, hasTeammates: false }, ""],
  ])("%o -> %s", (e, want) => {
    expect(agentRole(e)).toBe(want);
  });
});

describe("createSessionResolver", () => {
  async function resolverFor(opts: { withTeam?: boolean } = {}) {
    const tree = makeTree(join(dir, "home"), [
      {
        id: "1796000000000_aaaaa",
        cwd: "/work/alpha",
        source: "vscode",
        messages: [],
        subagents: { agent_1796_sub001: [] },
      },
      {
        id: "1796000000001_bbbbb",
        cwd: "/work/beta",
        source: "jetbrains",
        messages: [],
        indexed: false,
        subagents: { agent_1796_sub002: [] },
      },
      { id: "1796000000002_ccccc", cwd: "/work/gamma", messages: [], indexed: false, sidecar: false },
    ]);
    if (opts.withTeam) {
      writeFileSync(join(tree.sessionsDir, "1796000000001_bbbbb", "helper__Ab_1-z.messages.json"), "{}");
    }
    const problems: Problem[] = [];
    return {
      r: createSessionResolver(tree.sessionsDir, await readSessionIndex(tree.dbDir), problems),
      problems,
    };
  }

  it("project and client from the index cwd and source; the lead's agent is `lead`", async () => {
    const { r } = await resolverFor();
    expect(await r.facts("1796000000000_aaaaa", "agent_lead_x")).toEqual({
      project: "/work/alpha",
      agent: "lead",
      client: "vscode",
    });
  });

  it("a sub-agent: by its `<root>__<agentId>` index row, or by its document when unindexed", async () => {
    const { r } = await resolverFor();
    expect(await r.facts("1796000000000_aaaaa", "agent_1796_sub001")).toEqual({
      project: "/work/alpha",
      agent: "subagent",
      client: "vscode",
    });
    expect(await r.facts("1796000000001_bbbbb", "agent_1796_sub002")).toEqual({
      // From the root's sidecar: this session is not in the index.
      project: "/work/beta",
      agent: "subagent",
      client: "jetbrains",
    });
  });

  it("in a session with teammates a non-sub-agent request is unknown (lead or teammate)", async () => {
    const { r } = await resolverFor({ withTeam: true });
    expect((await r.facts("1796000000001_bbbbb", "agent_other")).agent).toBe("");
    expect((await r.facts("1796000000001_bbbbb", "agent_1796_sub002")).agent).toBe("subagent");
  });

  it("unknown project is empty; ids that are not path components are never used as paths", async () => {
    const { r, problems } = await resolverFor();
    // A session nothing on disk describes is the CLI's, as for its documents (client.ts).
    expect(await r.facts("1796000000002_ccccc", "a")).toEqual({ project: "", agent: "lead", client: "cli" });
    expect(await r.facts("../../etc", "../x")).toEqual({ project: "", agent: "lead", client: "cli" });
    expect(await r.facts("", "a")).toEqual({ project: "", agent: "", client: "" });
    expect(problems).toEqual([]);
  });
});
