import { type Dirent, readdirSync, realpathSync, statSync } from "node:fs";
import { join } from "node:path";
import type { Problem, Source } from "../../types.ts";
import { clientOfSource } from "../client.ts";
import type { IndexReadResult, IndexRow } from "../index-db.ts";
import type { ResolvedPath } from "../paths.ts";
import { readSidecar, type SidecarFacts } from "../sidecar.ts";
import type { SessionFacts } from "./parser.ts";
import { CAPTURE_SUFFIX, parseCaptureFileName } from "./paths.ts";
import { CLINE_CAPTURES_ADAPTER_ID } from "./schema.ts";

export interface CaptureListing {
  readonly sources: Source[];
  readonly problems: Problem[];
  /**
   * Real paths of the capture dirs whose full contents are known this pass (listed, or absent):
   * a checkpoint under one of them whose file was not listed belongs to a deleted file.
   */
  readonly complete: string[];
  /** Real paths of dirs that could not be listed: their checkpoints are kept. */
  readonly incomplete: string[];
}

function errno(e: unknown): string {
  return String((e as NodeJS.ErrnoException).code ?? (e as Error).message);
}

function isRegularFile(path: string): boolean {
  try {
    return statSync(path).isFile();
  } catch {
    // Gone or unreadable since the listing: simply not a capture now (the next pass looks again).
    return false;
  }
}

/**
 * Lists the capture files of every existing capture dir, each dir once (by realpath). Only
 * `<captureId>.<stage>.<n>.provider-request.json` files are sources: Cline's `*.tmp` files (a
 * write not yet renamed into place) and anything else are ignored. A name that ends like a
 * capture but does not parse is reported. Nothing is opened here, nothing is ever deleted.
 */
export function listCaptureFiles(dirs: readonly ResolvedPath[]): CaptureListing {
  const sources: Source[] = [];
  const problems: Problem[] = [];
  const complete: string[] = [];
  const incomplete: string[] = [];
  const seen = new Set<string>();
  for (const dir of dirs) {
    let real: string;
    try {
      real = realpathSync(dir.path);
    } catch (e) {
      // A capture dir that does not exist (yet) is the normal case when capture is off.
      if (errno(e) === "ENOENT" || errno(e) === "ENOTDIR") complete.push(dir.path);
      else {
        problems.push({ path: dir.path, code: "unreadable-capture-dir", detail: `${errno(e)} (${dir.via})` });
        incomplete.push(dir.path);
      }
      continue;
    }
    if (seen.has(real)) continue;
    seen.add(real);
    let entries: Dirent[];
    try {
      entries = readdirSync(real, { withFileTypes: true });
    } catch (e) {
      const code = errno(e);
      if (code === "ENOENT" || code === "ENOTDIR") complete.push(real);
      else {
        problems.push({ path: real, code: "unreadable-capture-dir", detail: `${code} (${dir.via})` });
        incomplete.push(real);
      }
      continue;
    }
    complete.push(real);
    const found: Source[] = [];
    for (const ent of entries) {
      if (!ent.name.endsWith(CAPTURE_SUFFIX)) continue;
      const name = parseCaptureFileName(ent.name);
      const path = join(real, ent.name);
      if (name === undefined) {
        problems.push({
          path,
          code: "capture-name-unparsed",
          detail: "not <captureId>.<stage>.<n>.provider-request.json",
        });
        continue;
      }
      if (!ent.isFile() && !(ent.isSymbolicLink() && isRegularFile(path))) continue;
      found.push({
        adapterId: CLINE_CAPTURES_ADAPTER_ID,
        path,
        origin: "walk",
        hint: {},
        kind: "capture-file",
      });
    }
    found.sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0));
    sources.push(...found);
  }
  return { sources, problems, complete, incomplete };
}

/** A session id or agent id used as a path component must be one: no separators, no `..`. */
function safeComponent(s: string): boolean {
  return /^[A-Za-z0-9_.-]{1,255}$/.test(s) && s !== "." && s !== "..";
}

export interface AgentEvidence {
  /** The index or the sessions tree knows `<root>__<agentId>` as a sub-agent of this session. */
  readonly knownSubagent: boolean;
  /** The session has teammates (index rows `<root>__teamtask__…`, or teammate documents). */
  readonly hasTeammates: boolean;
  readonly sessionId: string;
}

/**
 * Which agent made a captured request. Captures of sub-agents and teammates carry the ROOT
 * session id and their own `agent_…` id (observed with cline@3.0.65). A sub-agent is recognised
 * by its `<root>__<agentId>` index row or `<agentId>.messages.json` document; a teammate's
 * agent id appears nowhere else on disk, so in a session with teammates a request that is not
 * a sub-agent's could be the lead's or a teammate's: unknown ("").
 */
export function agentRole(e: AgentEvidence): string {
  if (e.sessionId === "") return "";
  if (e.knownSubagent) return "subagent";
  if (e.hasTeammates) return "";
  return "lead";
}

export interface SessionResolver {
  facts(sessionId: string, agentId: string): Promise<SessionFacts>;
}

/**
 * Joins a capture to its session the way the messages surface does (discover.ts): the project is
 * the session's (or its root's) index cwd, else the root sidecar's cwd; the client its (or its
 * root's) index source, else the sidecar's, as `cline.client` (client.ts). Lookups are cached for the
 * life of the resolver (one pass); sidecars are read with the allow-list scanner (cwd only).
 */
export function createSessionResolver(
  sessionsDir: string,
  index: IndexReadResult,
  problems: Problem[],
): SessionResolver {
  const byId = new Map<string, IndexRow>();
  for (const r of index.rows) byId.set(r.sessionId, r);
  const sidecarOfRoot = new Map<string, Promise<SidecarFacts>>();
  const docsOfRoot = new Map<string, Set<string>>();
  const teammatesOfRoot = new Map<string, boolean>();

  /** Document names in the root's folder (sub-agent and teammate streams live there). */
  const docs = (root: string): Set<string> => {
    let names = docsOfRoot.get(root);
    if (names === undefined) {
      names = new Set();
      try {
        for (const f of readdirSync(join(sessionsDir, root))) if (f.endsWith(".messages.json")) names.add(f);
      } catch (e) {
        const code = errno(e);
        if (code !== "ENOENT" && code !== "ENOTDIR") {
          problems.push({ path: join(sessionsDir, root), code: "unreadable-dir", detail: code });
        }
      }
      docsOfRoot.set(root, names);
    }
    return names;
  };

  return {
    async facts(sessionId, agentId) {
      if (sessionId === "") return { project: "", agent: "", client: "" };
      const root = sessionId.split("__")[0] ?? sessionId;
      const row = byId.get(sessionId);
      const rootRow = byId.get(root);
      let project = row?.cwd ?? rootRow?.cwd ?? undefined;
      let source = row?.source ?? rootRow?.source ?? undefined;
      const onDisk = safeComponent(root);
      if ((project === undefined || (row === undefined && rootRow === undefined)) && onDisk) {
        let p = sidecarOfRoot.get(root);
        if (p === undefined) {
          p = readSidecar(join(sessionsDir, root), root, problems);
          sidecarOfRoot.set(root, p);
        }
        const f = await p;
        project ??= f.cwd;
        source ??= f.source;
      }
      const names = onDisk ? docs(root) : new Set<string>();
      const subRow = agentId === "" ? undefined : byId.get(`${root}__${agentId}`);
      const knownSubagent =
        agentId !== "" &&
        (subRow?.isSubagent === true || (safeComponent(agentId) && names.has(`${agentId}.messages.json`)));
      let hasTeammates = teammatesOfRoot.get(root);
      if (hasTeammates === undefined) {
        const prefix = `${root}__teamtask__`;
        hasTeammates =
          [...byId.keys()].some((id) => id.startsWith(prefix)) ||
          // Teammate streams are `<name>__<rand>.messages.json`; sub-agents' are `agent_….messages.json`.
          [...names].some((n) => n.slice(0, -".messages.json".length).includes("__"));
        teammatesOfRoot.set(root, hasTeammates);
      }
      return {
        project: project ?? "",
        agent: agentRole({ sessionId, knownSubagent, hasTeammates }),
        client: clientOfSource(source).client,
      };
    },
  };
}
