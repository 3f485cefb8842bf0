import { mkdirSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { findGitFiles, headBranch, remoteUrl } from "../../src/vcs/git-dir.ts";
import { parseRemote } from "../../src/vcs/remote-url.ts";
import { repositoryAttributes } from "../../src/vcs/repository.ts";
import { RepositoryCache } from "../../src/vcs/repository-cache.ts";
import { treeFingerprint } from "../helpers/tree-hash.ts";

const TOKEN = "ghp_SECRETtoken1234567890";

describe("parseRemote: host and path only, credentials never kept", () => {
  it.each([
    [
      `https://user:${TOKEN}@github.com/acme/widgets.git`,
      "https://github.com/acme/widgets",
      "acme",
      "widgets",
    ],
    [`https://${TOKEN}@github.com/acme/widgets`, "https://github.com/acme/widgets", "acme", "widgets"],
    [
      `ssh://git:${TOKEN}@gitlab.example.com:2222/grp/sub/tool.git`,
      "https://gitlab.example.com/grp/sub/tool",
      "grp/sub",
      "tool",
    ],
    [
      `https://gitlab.com/acme/api.git?private_token=${TOKEN}#frag`,
      "https://gitlab.com/acme/api",
      "acme",
      "api",
    ],
    ["git@github.com:acme/widgets.git", "https://github.com/acme/widgets", "acme", "widgets"],
    [`oauth2:${TOKEN}@bitbucket.org:team/repo.git`, "https://bitbucket.org/team/repo", "team", "repo"],
    ["https://GitHub.com/acme/widgets/", "https://github.com/acme/widgets", "acme", "widgets"],
  ])("%s", (remote, url, owner, name) => {
    const r = parseRemote(remote);
    expect(r).toEqual({ url, owner, name });
    expect(JSON.stringify(r)).not.toContain(TOKEN);
  });

  it.each([
    "/srv/git/repo.git",
    "file:///srv/git/repo.git",
    "C:\\src\\repo",
    "../other",
    "https://host/",
    "",
  ])("no repository for %j (a local path names nothing)", (remote) =>
    expect(parseRemote(remote)).toBeUndefined());
});

describe("git config and HEAD", () => {
  it("takes origin, else the first remote; ignores other sections' url keys", () => {
    const cfg = `[core]\n\tbare = false\n[remote "upstream"]\n\turl = https://h/u/up.git\n[url "https://x/"]\n\tinsteadOf = gh:\n[remote "origin"]\n\turl = "git@h:o/r.git"\n`;
    expect(remoteUrl(cfg)).toBe("git@h:o/r.git");
    expect(remoteUrl('[remote "fork"]\n  url=https://h/a/b\n')).toBe("https://h/a/b");
    expect(remoteUrl("[core]\n\tbare = false\n")).toBeUndefined();
  });

  it("branch from HEAD; detached is none", () => {
    expect(headBranch("ref: refs/heads/feature/x\n")).toBe("feature/x");
    expect(headBranch("3f2a9c0d1e\n")).toBeUndefined();
    expect(headBranch(undefined)).toBeUndefined();
  });
});

describe("a workspace's repository, read-only", () => {
  let root: string | undefined;
  afterEach(() => {
    if (root) rmSync(root, { recursive: true, force: true });
    root = undefined;
  });

  function repo(): { main: string; ws: string } {
    root = mkdtempSync(join(tmpdir(), "cline-otel-vcs-"));
    const main = join(root, "main");
    mkdirSync(join(main, ".git"), { recursive: true });
    writeFileSync(
      join(main, ".git", "config"),
      `[remote "origin"]\n\turl = https://me:${TOKEN}@github.com/acme/widgets.git\n`,
    );
    writeFileSync(join(main, ".git", "HEAD"), "ref: refs/heads/main\n");
    const ws = join(main, "packages", "app");
    mkdirSync(ws, { recursive: true });
    return { main, ws };
  }

  it("walks up from a subfolder; strips the token; gives the branch", () => {
    const { ws } = repo();
    const before = treeFingerprint(root as string);
    const r = repositoryAttributes(ws);
    expect(r.all).toEqual({
      "vcs.repository.url.full": "https://github.com/acme/widgets",
      "vcs.repository.name": "widgets",
      "vcs.owner.name": "acme",
      "vcs.ref.head.name": "main",
    });
    expect(r.series).not.toHaveProperty("vcs.ref.head.name");
    expect(JSON.stringify(r)).not.toContain(TOKEN);
    // Nothing created or changed in the workspace.
    expect(treeFingerprint(root as string)).toEqual(before);
  });

  it("a worktree (.git file -> gitdir with commondir): the shared config, its own HEAD", () => {
    const { main } = repo();
    const wtGit = join(main, ".git", "worktrees", "feat");
    mkdirSync(wtGit, { recursive: true });
    writeFileSync(join(wtGit, "commondir"), "../..\n");
    writeFileSync(join(wtGit, "HEAD"), "ref: refs/heads/feat\n");
    const wt = join(root as string, "feat");
    mkdirSync(wt);
    writeFileSync(join(wt, ".git"), `gitdir: ${wtGit}\n`);
    expect(findGitFiles(wt)).toEqual({ gitDir: wtGit, commonDir: join(main, ".git") });
    expect(repositoryAttributes(wt).all).toMatchObject({
      "vcs.repository.name": "widgets",
      "vcs.ref.head.name": "feat",
    });
  });

  it("a submodule (.git file, relative gitdir): its own config and remote", () => {
    const { main } = repo();
    const modGit = join(main, ".git", "modules", "lib");
    mkdirSync(modGit, { recursive: true });
    writeFileSync(join(modGit, "config"), '[remote "origin"]\n\turl = git@github.com:acme/lib.git\n');
    writeFileSync(join(modGit, "HEAD"), "0123456789abcdef\n");
    const sub = join(main, "lib");
    mkdirSync(sub);
    writeFileSync(join(sub, ".git"), "gitdir: ../.git/modules/lib\n");
    expect(repositoryAttributes(sub).all).toEqual({
      "vcs.repository.url.full": "https://github.com/acme/lib",
      "vcs.repository.name": "lib",
      "vcs.owner.name": "acme",
    });
  });

  it("no remote, no repository, no cwd: nothing", () => {
    root = mkdtempSync(join(tmpdir(), "cline-otel-vcs-"));
    mkdirSync(join(root, "r", ".git"), { recursive: true });
    writeFileSync(join(root, "r", ".git", "config"), "[core]\n");
    writeFileSync(join(root, "r", ".git", "HEAD"), "ref: refs/heads/main\n");
    expect(repositoryAttributes(join(root, "r")).series).toEqual({});
    expect(repositoryAttributes(join(root, "r")).all).toEqual({ "vcs.ref.head.name": "main" });
    expect(repositoryAttributes("").all).toEqual({});
    expect(readdirSync(root)).toEqual(["r"]);
  });

  it("the lookup reads a workspace once (no pass ended), and reports a failure once", () => {
    let reads = 0;
    const errors: string[] = [];
    const { lookup } = new RepositoryCache({
      onError: (ws) => errors.push(ws),
      read: (ws) => {
        reads++;
        if (ws === "/bad") throw new Error("EACCES");
        return { series: { "vcs.repository.name": ws }, all: {} };
      },
    });
    expect(lookup("/a").series).toEqual({ "vcs.repository.name": "/a" });
    lookup("/a");
    expect(lookup("/bad").series).toEqual({});
    lookup("/bad");
    expect(reads).toBe(2);
    expect(errors).toEqual(["/bad"]);
  });
});
