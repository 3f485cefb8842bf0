/**
 * Which ledger key columns a cumulative export folds (src/ledger/fold.ts): the series key less
 * what is not exported (session_id when session.id is off; project when neither cline.project
 * nor a repository attribute is), and the project grouped by its rendering when that rendering
 * is not injective (basename, hash) or repository attributes are derived from it. Grouping by the
 * rendered value, not by the path, makes each group exactly one exported attribute set: a pass
 * never sends one attribute set twice as partial sums, whatever the rendering.
 */
import type { FoldKey } from "../ledger/ledger.ts";
import { renderProject } from "./attributes.ts";
import type { TranslateOptions } from "./translate.ts";

/** undefined: nothing folds (every series is one ledger row, read by id). */
export function foldKeyOf(
  t: Pick<TranslateOptions, "project" | "includeSessionId" | "repositoryOf">,
): FoldKey | undefined {
  const drop: string[] = [];
  if (!t.includeSessionId) drop.push("session_id");
  const repositoryOf = t.repositoryOf;
  const injective = t.project === "path";
  if (t.project === "none" && repositoryOf === undefined) drop.push("project");
  const renders = !injective && !(t.project === "none" && repositoryOf === undefined);
  if (drop.length === 0 && !renders) return undefined;
  if (!renders) return { drop };
  // One entry per distinct cwd of the ledger (a handful): rendered once, not per row and page.
  const memo = new Map<string, string>();
  const mode = t.project;
  const fn = (cwd: string): string => {
    let v = memo.get(cwd);
    if (v === undefined) {
      // Exactly what the attributes carry: the project as rendered and the repository's series attributes.
      v = JSON.stringify([renderProject(cwd, mode) ?? null, repositoryOf?.(cwd).series ?? null]);
      memo.set(cwd, v);
    }
    return v;
  };
  return { drop, render: { column: "project", fn } };
}
