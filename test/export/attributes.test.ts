import { describe, expect, it } from "vitest";
import { ALLOWED_ATTRIBUTES, allowListed, renderProject, seriesKey } from "../../src/export/attributes.ts";

describe("renderProject", () => {
  it.each([
    ["/home/u/work/app", "path", "/home/u/work/app"],
    ["/home/u/work/app", "basename", "app"],
    ["/home/u/work/app/", "basename", "app"],
    ["/", "basename", "/"],
    ["/home/u/work/app", "none", undefined],
    ["", "path", ""],
    ["", "basename", ""],
    ["", "hash", ""],
    ["", "none", undefined],
  ] as const)("%s as %s -> %s", (cwd, mode, expected) => {
    expect(renderProject(cwd, mode)).toBe(expected);
  });

  it("hash is a stable hex digest with nothing of the path left", () => {
    const h = renderProject("/home/alice/secret-project", "hash");
    expect(h).toMatch(/^[0-9a-f]{16}$/);
    expect(renderProject("/home/alice/secret-project", "hash")).toBe(h);
    expect(renderProject("/home/alice/other", "hash")).not.toBe(h);
    for (const piece of ["home", "alice", "secret", "project"]) expect(h).not.toContain(piece);
  });
});

describe("allow-list", () => {
  it("keeps only the contract's keys", () => {
    expect(
      allowListed({
        "session.id": "s",
        "cline.agent": "lead",
        "gen_ai.tool.name": "t",
        sourcePath: "/secret/path",
        "gen_ai.prompt": "text",
        type: "input",
      }),
    ).toEqual({ "session.id": "s", "cline.agent": "lead", "gen_ai.tool.name": "t", type: "input" });
  });

  it("is exactly the documented set", () => {
    expect([...ALLOWED_ATTRIBUTES].sort()).toEqual(
      [
        "session.id",
        "cline.agent",
        "cline.project",
        "gen_ai.request.model",
        "gen_ai.provider.name",
        "type",
        "gen_ai.tool.name",
        "cline.usage.known",
        "cline.tool.outcome",
        "cline.client",
        // file edits (docs/metrics.md "What Cline delivered")
        "operation",
        "decision",
        "source",
        "language",
        "cline.lines.exact",
        "vcs.repository.url.full",
        "vcs.repository.name",
        "vcs.owner.name",
        // cline.sessions
        "start_type",
      ].sort(),
    );
  });
});

describe("seriesKey", () => {
  it("does not depend on key order", () => {
    expect(seriesKey({ a: "1", b: "2" })).toBe(seriesKey({ b: "2", a: "1" }));
    expect(seriesKey({ a: "1", b: "2" })).not.toBe(seriesKey({ a: "1", b: "3" }));
  });
});
