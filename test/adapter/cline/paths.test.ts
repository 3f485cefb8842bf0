import { describe, expect, it } from "vitest";
import { isWithin, resolveClinePaths } from "../../../src/adapter/cline/paths.ts";

const HOME = "/home/u";
const CWD = "/work";

describe("resolveClinePaths", () => {
  const cases: {
    name: string;
    flags?: Record<string, string>;
    env?: Record<string, string>;
    want: [string, string, string, string];
    origins?: [string, string, string, string];
  }[] = [
    {
      name: "defaults: the data/ level is real",
      want: [
        "/home/u/.cline",
        "/home/u/.cline/data",
        "/home/u/.cline/data/sessions",
        "/home/u/.cline/data/db",
      ],
      origins: ["default", "default", "default", "default"],
    },
    {
      name: "CLINE_DIR moves everything below it",
      env: { CLINE_DIR: "/c" },
      want: ["/c", "/c/data", "/c/data/sessions", "/c/data/db"],
      origins: ["env", "env", "env", "env"],
    },
    {
      name: "CLINE_DATA_DIR beats CLINE_DIR for data, sessions and db",
      env: { CLINE_DIR: "/c", CLINE_DATA_DIR: "/d" },
      want: ["/c", "/d", "/d/sessions", "/d/db"],
    },
    {
      name: "CLINE_SESSION_DATA_DIR IS the sessions directory (no sessions/ appended)",
      env: { CLINE_SESSION_DATA_DIR: "/s" },
      want: ["/home/u/.cline", "/home/u/.cline/data", "/s", "/home/u/.cline/data/db"],
      origins: ["default", "default", "env", "default"],
    },
    {
      name: "CLINE_DB_DATA_DIR moves only the db",
      env: { CLINE_DB_DATA_DIR: "/y" },
      want: ["/home/u/.cline", "/home/u/.cline/data", "/home/u/.cline/data/sessions", "/y"],
    },
    {
      name: "empty variables are unset, as in Cline",
      env: { CLINE_DIR: "", CLINE_SESSION_DATA_DIR: "" },
      want: [
        "/home/u/.cline",
        "/home/u/.cline/data",
        "/home/u/.cline/data/sessions",
        "/home/u/.cline/data/db",
      ],
    },
    {
      name: "flags beat env at their level",
      flags: { clineDir: "/f" },
      env: { CLINE_DIR: "/c" },
      want: ["/f", "/f/data", "/f/data/sessions", "/f/data/db"],
      origins: ["flag", "flag", "flag", "flag"],
    },
    {
      name: "a flag above beats env below (like Cline's --data-dir)",
      flags: { dataDir: "/fd" },
      env: { CLINE_SESSION_DATA_DIR: "/s", CLINE_DB_DATA_DIR: "/y" },
      want: ["/home/u/.cline", "/fd", "/fd/sessions", "/fd/db"],
    },
    {
      name: "--sessions-dir is the sessions directory itself",
      flags: { sessionsDir: "/fs" },
      env: { CLINE_SESSION_DATA_DIR: "/s" },
      want: ["/home/u/.cline", "/home/u/.cline/data", "/fs", "/home/u/.cline/data/db"],
      origins: ["default", "default", "flag", "default"],
    },
    {
      name: "relative paths resolve against the working directory",
      flags: { dbDir: "rel/db" },
      env: { CLINE_DIR: "c" },
      want: ["/work/c", "/work/c/data", "/work/c/data/sessions", "/work/rel/db"],
    },
  ];
  for (const c of cases) {
    it(c.name, () => {
      const p = resolveClinePaths(c.flags ?? {}, c.env ?? {}, HOME, CWD);
      expect([p.root.path, p.data.path, p.sessions.path, p.db.path]).toEqual(c.want);
      if (c.origins)
        expect([p.root.origin, p.data.origin, p.sessions.origin, p.db.origin]).toEqual(c.origins);
    });
  }

  it("names where each path came from", () => {
    const p = resolveClinePaths({}, { CLINE_SESSION_DATA_DIR: "/s" }, HOME, CWD);
    expect(p.sessions.via).toBe("CLINE_SESSION_DATA_DIR");
    expect(p.db.via).toBe("<home>/.cline/data/db");
  });

  it("returns a frozen object", () => {
    expect(Object.isFrozen(resolveClinePaths({}, {}, HOME, CWD))).toBe(true);
  });
});

describe("isWithin", () => {
  it.each([
    ["/a/b", "/a", true],
    ["/a", "/a", true],
    ["/ab", "/a", false],
    ["/a/../b", "/a", false],
  ])("%s within %s is %s", (inner, outer, want) => {
    expect(isWithin(inner, outer)).toBe(want);
  });
});
