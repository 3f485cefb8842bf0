/**
 * Which ledger key columns a cumulative export folds (src/ledger/usage/fold.ts): the series key less
 * what is not exported (session_id when session.id is off; project when neither cline.project
 * nor a repository attribute is), and the project grouped by its rendering when that rendering
 * is not injective (basename, hash) or repository attributes are derived from it. Grouping by the
 * rendered value, not by the path, makes each group exactly one exported attribute set: a pass
 * never sends one attribute set twice as partial sums, whatever the rendering.
 */
import type { FoldKey, TableFold } from "../ledger/ledger.ts";
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
  const tables = { genai: genaiFold(t) };
  if (!renders) return { drop, tables };
  const mode = t.project;
  // Exactly what the attributes carry: the project as rendered and the repository's series attributes.
  const fn = memoized((cwd) =>
    JSON.stringify([renderProject(cwd, mode) ?? null, repositoryOf?.(cwd).series ?? null]),
  );
  return { drop, render: { column: "project", fn }, tables };
}

/**
 * The GenAI histograms carry no cline.project, only the repository's attributes (when on): their
 * rows group by the repository the project names, or not by project at all.
 */
function genaiFold(t: Pick<TranslateOptions, "includeSessionId" | "repositoryOf">): TableFold {
  const drop = t.includeSessionId ? [] : ["session_id"];
  const repositoryOf = t.repositoryOf;
  if (repositoryOf === undefined) return { drop: [...drop, "project"] };
  return {
    drop,
    render: { column: "project", fn: memoized((cwd) => JSON.stringify(repositoryOf(cwd).series)) },
  };
}

/** One entry per distinct cwd of the ledger (a handful): rendered once, not per row and page. */
function memoized(render: (cwd: string) => string): (cwd: string) => string {
  const memo = new Map<string, string>();
  return (cwd) => {
    let v = memo.get(cwd);
    if (v === undefined) {
      v = render(cwd);
      memo.set(cwd, v);
    }
    return v;
  };
}
