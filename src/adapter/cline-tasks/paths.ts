/**
 * Where the task format lives (docs/cline-format.md §15.1): Cline CLI 1.x/2.x and JetBrains under
 * `${CLINE_DIR:-~/.cline}/data`, the VS Code extension's legacy core under its global storage
 * folder `saoudrizwan.claude-dev/` of every VS Code-family editor, locally and in the editors'
 * remote-server folders (SSH, WSL, containers). Candidates only: discovery keeps those that exist.
 * Everything from the environment arrives as an argument.
 */
import { posix, win32 } from "node:path";
import type { TaskRoot } from "./types.ts";

/** The extension id of Cline in VS Code-family editors: its global storage folder's name. */
export const CLINE_EXTENSION_ID = "saoudrizwan.claude-dev";

/** VS Code-family editors: the folder name of their user data, and what `paths` calls them. */
export const EDITORS: readonly { readonly folder: string; readonly product: string }[] = [
  { folder: "Code", product: "VS Code" },
  { folder: "Code - Insiders", product: "VS Code Insiders" },
  { folder: "Code - OSS", product: "Code - OSS" },
  { folder: "VSCodium", product: "VSCodium" },
  { folder: "Cursor", product: "Cursor" },
  { folder: "Windsurf", product: "Windsurf" },
  { folder: "Positron", product: "Positron" },
];

/** Server-side user data of the editors' remote modes, under the remote user's home. */
export const REMOTE_SERVERS: readonly { readonly folder: string; readonly product: string }[] = [
  { folder: ".vscode-server", product: "VS Code Server" },
  { folder: ".vscode-server-insiders", product: "VS Code Insiders Server" },
  { folder: ".vscode-remote", product: "VS Code remote container" },
  { folder: ".vscodium-server", product: "VSCodium Server" },
  { folder: ".cursor-server", product: "Cursor Server" },
  { folder: ".windsurf-server", product: "Windsurf Server" },
  { folder: ".positron-server", product: "Positron Server" },
];

export interface TaskRootInput {
  readonly home: string;
  readonly platform: NodeJS.Platform;
  /** CLINE_DIR, XDG_CONFIG_HOME, APPDATA: the only variables read. */
  readonly env: Readonly<Record<string, string | undefined>>;
  readonly cwd: string;
  /** Roots named by the user (flag or variable), each with what named it. */
  readonly add?: readonly { readonly path: string; readonly via: string }[];
  /** Roots the user excluded (their exact path). */
  readonly remove?: readonly string[];
  /** False: only the roots in `add`. */
  readonly defaults?: boolean;
}

function nonEmpty(v: string | undefined): string | undefined {
  return v === undefined || v === "" ? undefined : v;
}

/** Every candidate root, in a stable order, without duplicates or excluded paths. */
export function taskRootCandidates(input: TaskRootInput): TaskRoot[] {
  const p = input.platform === "win32" ? win32 : posix;
  const out: TaskRoot[] = [];
  const seen = new Set((input.remove ?? []).map((r) => p.resolve(input.cwd, r)));
  const push = (path: string, r: Omit<TaskRoot, "path">): void => {
    const abs = p.resolve(input.cwd, path);
    if (seen.has(abs)) return;
    seen.add(abs);
    out.push(Object.freeze({ path: abs, ...r }));
  };
  for (const a of input.add ?? []) {
    // A named extension storage folder is the extension's; any other root is a CLI's data dir.
    const vscode = p.basename(p.resolve(input.cwd, a.path)) === CLINE_EXTENSION_ID;
    push(a.path, { client: vscode ? "vscode" : "cli", product: "named root", foundBy: a.via });
  }
  if (input.defaults === false) return out;

  const clineDir = nonEmpty(input.env.CLINE_DIR);
  push(p.join(clineDir ?? p.join(input.home, ".cline"), "data"), {
    client: "cli",
    product: "Cline CLI 1.x/2.x or JetBrains",
    foundBy: clineDir !== undefined ? "CLINE_DIR" : "<home>/.cline",
  });

  const userData =
    input.platform === "win32"
      ? {
          base: nonEmpty(input.env.APPDATA) ?? p.join(input.home, "AppData", "Roaming"),
          how: "Windows %APPDATA%",
        }
      : input.platform === "darwin"
        ? { base: p.join(input.home, "Library", "Application Support"), how: "macOS Application Support" }
        : {
            base: nonEmpty(input.env.XDG_CONFIG_HOME) ?? p.join(input.home, ".config"),
            how: nonEmpty(input.env.XDG_CONFIG_HOME) !== undefined ? "XDG_CONFIG_HOME" : "<home>/.config",
          };
  for (const e of EDITORS) {
    push(p.join(userData.base, e.folder, "User", "globalStorage", CLINE_EXTENSION_ID), {
      client: "vscode",
      product: e.product,
      foundBy: `${userData.how}/${e.folder}`,
    });
  }
  for (const s of REMOTE_SERVERS) {
    push(p.join(input.home, s.folder, "data", "User", "globalStorage", CLINE_EXTENSION_ID), {
      client: "vscode",
      product: s.product,
      foundBy: `<home>/${s.folder}`,
    });
  }
  return out;
}
