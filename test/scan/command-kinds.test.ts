/**
 * Commits and pull requests in a command line (src/scan/command-kinds.ts): the shell's separators
 * and quotes, git's global options, the PR-opening CLIs, and what must NOT count (commit-tree, text
 * inside an echo'd string, a comment, a word that merely starts like one).
 */
import { describe, expect, it } from "vitest";
import { commandKinds } from "../../src/scan/command-kinds.ts";
import { escaped } from "./escaped-helpers.ts";

const CASES: [string, string[]][] = [
  ["git commit -m 'x'", ["commit"]],
  ['git commit -am "fix: a && b"', ["commit"]],
  ["cd repo && git add . && git commit -m wip", ["commit"]],
  ["git add -A; git commit -m a\ngit push", ["commit"]],
  ["git -C sub/dir commit -m x", ["commit"]],
  ['git -C "a dir" -c user.name=x --no-pager commit', ["commit"]],
  ["git --git-dir .git --work-tree=. commit --amend --no-edit", ["commit"]],
  ["GIT_AUTHOR_NAME=x FOO=1 git commit -m y", ["commit"]],
  ["sudo -E env git commit", ["commit"]],
  ["(cd x && git commit -m y) | tee log", ["commit"]],
  ["if true; then git commit -m x; fi", ["commit"]],
  ["echo hi | git commit -F -", ["commit"]],
  ["gh pr create --fill", ["pull_request"]],
  ["git push -u origin HEAD && gh pr create -t 'T' -b \"B\"", ["pull_request"]],
  ["gh pr new", ["pull_request"]],
  ["glab mr create --fill --yes", ["pull_request"]],
  ["hub pull-request -m x", ["pull_request"]],
  ["az repos pr create --title x", ["pull_request"]],
  ["git commit -m a && gh pr create --fill", ["commit", "pull_request"]],
  ["git commit -m a; git commit --amend", ["commit", "commit"]],
  ["g\\it commit", ["commit"]],
  ['"git" commit', ["commit"]],
  // never
  ["git commit-tree HEAD^{tree}", []],
  ["git log --grep commit", []],
  ['echo "git commit -m x"', []],
  ["echo 'gh pr create'", []],
  ["echo git commit", []],
  ["# git commit -m x", []],
  ["ls # && git commit", []],
  ["gitx commit", []],
  ["git status", []],
  ["gh pr list; gh pr view", []],
  ["gh issue create", []],
  ["glab mr list", []],
  ["git stash && git status", []],
  ["", []],
];

describe("commandKinds", () => {
  for (const depth of [1, 2] as const) {
    it(`every case (depth ${depth})`, () => {
      for (const [line, kinds] of CASES) expect(commandKinds(escaped(line, depth)), line).toEqual(kinds);
    });
  }

  it("a newline inside quotes does not start a command; a CRLF ends one", () => {
    expect(commandKinds(escaped('echo "a\ngit commit"', 1))).toEqual([]);
    expect(commandKinds(escaped("git status\r\ngit commit -m x\r\n", 1))).toEqual(["commit"]);
  });
});
