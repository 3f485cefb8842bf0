/**
 * The repository cache: a workspace's git files looked at again at most once per pass, read
 * again only when they changed (a remote added, a branch switched), credentials still stripped,
 * bounded in workspaces.
 */
import { mkdirSync, mkdtempSync, renameSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { repositoryAttributes } from "../../src/vcs/repository.ts";
import { gitFingerprint, RepositoryCache } from "../../src/vcs/repository-cache.ts";

const TOKEN = "ghp_CACHEsecret1234567890";
let root: string | undefined;
afterEach(() => {
  if (root) rmSync(root, { recursive: true, force: true });
  root = undefined;
});

/** A clone without a remote on branch main; `git` writes its files through a lock and a rename. */
function clone(): { ws: string; write: (name: "config" | "HEAD", text: string) => void } {
  root = mkdtempSync(join(tmpdir(), "cline-otel-vcs-cache-"));
  const ws = join(root, "widgets");
  const git = join(ws, ".git");
  mkdirSync(git, { recursive: true });
  const write = (name: "config" | "HEAD", text: string) => {
    writeFileSync(join(git, `${name}.lock`), text);
    renameSync(join(git, `${name}.lock`), join(git, name));
  };
  write("config", "[core]\n\tbare = false\n");
  write("HEAD", "ref: refs/heads/main\n");
  return { ws, write };
}

describe("RepositoryCache", () => {
  it("a remote added and a branch switched show after the next pass; the token never does", () => {
    const { ws, write } = clone();
    let reads = 0;
    const cache = new RepositoryCache({
      onError: (w, e) => {
        throw new Error(`${w}: ${String(e)}`);
      },
      read: (w) => {
        reads++;
        return repositoryAttributes(w);
      },
    });
    expect(cache.lookup(ws).all).toEqual({ "vcs.ref.head.name": "main" });
    write("config", `[remote "origin"]\n\turl = https://me:${TOKEN}@github.com/acme/widgets.git\n`);
    write("HEAD", "ref: refs/heads/feature/x\n");
    // Within a pass: the value it started with (no stat per row exported).
    expect(cache.lookup(ws).all).toEqual({ "vcs.ref.head.name": "main" });
    cache.nextPass();
    const now = cache.lookup(ws);
    expect(now.all).toEqual({
      "vcs.repository.url.full": "https://github.com/acme/widgets",
      "vcs.repository.name": "widgets",
      "vcs.owner.name": "acme",
      "vcs.ref.head.name": "feature/x",
    });
    expect(JSON.stringify(now)).not.toContain(TOKEN);
    expect(reads).toBe(2);
    // Passes without a change: a stat, no read.
    for (let i = 0; i < 3; i++) {
      cache.nextPass();
      cache.lookup(ws);
    }
    expect(reads).toBe(2);
    // The remote removed: no vcs.* but the branch.
    write("config", "[core]\n");
    cache.nextPass();
    expect(cache.lookup(ws).all).toEqual({ "vcs.ref.head.name": "feature/x" });
  });

  it("the fingerprint follows the files git rewrites, and is empty outside a repository", () => {
    const { ws, write } = clone();
    const a = gitFingerprint(ws);
    // Same size, same content: a rename still gives a new inode.
    write("HEAD", "ref: refs/heads/main\n");
    expect(gitFingerprint(ws)).not.toBe(a);
    expect(gitFingerprint(join(root as string))).toBe("");
    expect(gitFingerprint("")).toBe("");
  });

  it("bounded: the workspace least recently looked at is forgotten, and read again when it returns", () => {
    let reads = 0;
    const cache = new RepositoryCache({
      onError: () => {},
      read: (w) => {
        reads++;
        return { series: { "vcs.repository.name": w }, all: {} };
      },
      fingerprint: () => "same",
      maxWorkspaces: 2,
    });
    cache.lookup("/a");
    cache.lookup("/b");
    cache.nextPass();
    cache.lookup("/a");
    cache.lookup("/c");
    expect(cache.size).toBe(2);
    expect(reads).toBe(3);
    cache.lookup("/a");
    expect(reads).toBe(3);
    cache.lookup("/b");
    expect(reads).toBe(4);
  });

  it("a failure is reported once while it lasts, and again after a recovery", () => {
    const errors: string[] = [];
    let broken = true;
    const cache = new RepositoryCache({
      onError: (w) => errors.push(w),
      read: () => {
        if (broken) throw new Error("EACCES");
        return { series: {}, all: { "vcs.ref.head.name": "main" } };
      },
      fingerprint: () => (broken ? "x" : "y"),
    });
    for (let i = 0; i < 3; i++) {
      expect(cache.lookup("/w").all).toEqual({});
      cache.nextPass();
    }
    expect(errors).toEqual(["/w"]);
    broken = false;
    expect(cache.lookup("/w").all).toEqual({ "vcs.ref.head.name": "main" });
    broken = true;
    cache.nextPass();
    cache.lookup("/w");
    expect(errors).toEqual(["/w", "/w"]);
  });
});
