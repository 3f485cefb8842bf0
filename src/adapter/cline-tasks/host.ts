/**
 * `cline.client` of a task-format task from the host that ran it: `task_metadata.json`'s
 * `environment_history[].host_name`, which the legacy core fills with its host bridge's
 * `getHostVersion().platform` (docs/cline-format.md §15.10): "Cline CLI - Node.js" for the CLI,
 * `vscode.env.appName` for the VS Code extension, the IDE's name for the JetBrains plugin.
 * A metric label, so one of a closed set, never the raw text.
 */

/** What the legacy core writes when its host bridge gave no platform (and when it failed). */
const UNKNOWN_HOST = "unknown";

/** `vscode.env.appName` of VS Code-family editors other than "Visual Studio Code ..." itself. */
const VSCODE_FORKS: readonly string[] = ["code - oss", "vscodium", "cursor", "windsurf", "positron"];

/**
 * Parts of a JetBrains IDE's name: the SDK's own list (`resolveClientSessionSource`, §5.3) and the
 * other IDEs the plugin runs in.
 */
const JETBRAINS_NAMES: readonly string[] = [
  "jetbrains",
  "intellij",
  "pycharm",
  "webstorm",
  "goland",
  "clion",
  "rider",
  "android studio",
  "phpstorm",
  "rubymine",
  "rustrover",
  "datagrip",
  "dataspell",
];

/** How much of an unexpected host name a problem line shows, after sanitizing. */
const SHOWN_CHARS = 32;

export type HostClient = "cli" | "vscode" | "jetbrains";

export type HostOf =
  /** The name says nothing (absent, empty, Cline's own "Unknown"): the root decides. */
  | { readonly kind: "absent" }
  | { readonly kind: "known"; readonly client: HostClient }
  /** A name outside the table, sanitized and bounded for a problem line. */
  | { readonly kind: "unexpected"; readonly shown: string };

/** One `host_name` as a client. */
export function clientOfHostName(hostName: string | undefined): HostOf {
  const h = (hostName ?? "").trim().toLowerCase();
  if (h === "" || h === UNKNOWN_HOST) return { kind: "absent" };
  if (h.startsWith("cline cli")) return { kind: "known", client: "cli" };
  if (h.startsWith("visual studio code") || h.includes("vscode") || VSCODE_FORKS.includes(h))
    return { kind: "known", client: "vscode" };
  if (JETBRAINS_NAMES.some((n) => h.includes(n))) return { kind: "known", client: "jetbrains" };
  const shown = h.slice(0, SHOWN_CHARS).replace(/[^a-z0-9 ._-]/g, "?");
  return { kind: "unexpected", shown: h.length > SHOWN_CHARS ? `${shown}...` : shown };
}
