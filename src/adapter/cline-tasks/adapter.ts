/**
 * The task format's adapter (docs/cline-format.md §15): the legacy core's `ui_messages.json` of
 * Cline CLI 1.x/2.x, JetBrains and the VS Code extension, behind the same Adapter interface as
 * the CLI 3.x adapter. Its keys start with `cline-tasks|`: nothing is deduplicated across the two.
 */
import { basename, dirname, join } from "node:path";
import { ScanError, scanFile } from "../../scan/scanner.ts";
import { CountingScratch } from "../../scan/scratch.ts";
import { checkpointOf, collectIfChanged, mtimeMsOfNs, readWhole, unchangedNow } from "../fingerprint.ts";
import { failedObservation, scanFailed } from "../scan-failure.ts";
import type { Adapter, Observation, Problem, Source } from "../types.ts";
import { type DiscoveryStats, discoverTasks, discoveryMemo, UI_MESSAGES } from "./discover.ts";
import { HistoryCache, type HistoryEntry, historyMismatch } from "./history.ts";
import {
  type ClientAt,
  clientTimeline,
  readTaskHosts,
  TASK_METADATA,
  unexpectedHostClient,
} from "./metadata.ts";
import { parseUiMessages } from "./parser.ts";
import { uiMessagesSchema } from "./schema.ts";
import { CLINE_TASKS_ADAPTER_ID, type TaskRoot } from "./types.ts";
import { taskWatchPlan } from "./watch-plan.ts";

export interface TasksAdapter extends Adapter {
  /** The roots that existed at the last discovery (for `paths` and `report`). */
  foundRoots(): readonly TaskRoot[];
}

const failed = failedObservation;

/** `<root>/tasks/<taskId>/ui_messages.json` -> root path and task id. */
export function taskOfPath(path: string): { root: string; taskId: string } {
  const taskDir = dirname(path);
  return { root: dirname(dirname(taskDir)), taskId: basename(taskDir) };
}

export function createClineTasksAdapter(roots: readonly TaskRoot[]): TasksAdapter {
  const byPath = new Map(roots.map((r) => [r.path, r]));
  const history = new HistoryCache();
  let found: readonly TaskRoot[] = [];
  /** The history entries of the last discovery, per root. */
  let entries: ReadonlyMap<string, ReadonlyMap<string, HistoryEntry>> = new Map();
  /** Per task_metadata.json, the fingerprint of its last torn read: the same torn state twice is broken. */
  const torn = new Map<string, string>();
  /** Unexpected host names already reported (once per adapter, not once per read). */
  const reportedHosts = new Set<string>();
  /** The line counting's arrays, for every document this adapter parses (parsing is synchronous). */
  const counting = new CountingScratch();

  /**
   * The task's clients by time (task_metadata.json). A torn file is first taken as a write under
   * way: the whole read is retried next pass, so no event is labelled from a half-written file;
   * the same torn state met again is a broken file: the root's client, reported.
   */
  async function clientsOf(
    source: Source,
    root: TaskRoot,
    problems: Problem[],
  ): Promise<ClientAt | Observation> {
    const path = join(dirname(source.path), TASK_METADATA);
    const m = await readTaskHosts(dirname(source.path));
    if (m.status !== "torn") torn.delete(path);
    if (m.status === "absent") return clientTimeline([], root);
    if (m.status === "read") {
      const c = clientTimeline(m.entries, root);
      for (const name of c.unexpected) {
        if (reportedHosts.has(name)) continue;
        reportedHosts.add(name);
        problems.push({
          path,
          code: "unknown-host-name",
          detail: `host_name "${name}" is not a known Cline host: counted as cline.client "${unexpectedHostClient(root)}"`,
        });
      }
      return c;
    }
    if (m.status === "unreadable") {
      problems.push({
        path,
        code: "task-metadata-unreadable",
        detail: `${m.detail}: cline.client from the root`,
      });
      return clientTimeline([], root);
    }
    const key = m.stat === undefined ? undefined : `${m.stat.ino}:${m.stat.size}:${m.stat.mtimeNs}`;
    if (key === undefined || torn.get(path) !== key) {
      if (key !== undefined) torn.set(path, key);
      return failed(source, "task-metadata-partial", `${TASK_METADATA}: ${m.detail}; read again next pass`);
    }
    problems.push({
      path,
      code: "task-metadata-unreadable",
      detail: `${m.detail}: cline.client from the root`,
    });
    return clientTimeline([], root);
  }
  /**
   * The stats the last discovery found its sources by, for the gate of the pass it starts: an
   * idle pass gates every source synchronously right after discovery, so one stat per task does
   * for both. Dropped at the next turn of the event loop, so no later pass (the loop reuses a
   * discovery) ever gates on them: a stat is at most that synchronous stretch old.
   */
  let discoveryStats: DiscoveryStats | undefined;
  /** The last discovery's sources by path: listed again unchanged, they are the same objects. */
  let previous: ReadonlyMap<string, Source> = new Map();
  /** Each root's `tasks/` listing and last sweep, held across discoveries (discover.ts DiscoveryMemo). */
  const memo = discoveryMemo();
  /** Roots where the last discovery listed a task without a history entry (its cwd may come). */
  let entryless: ReadonlySet<string> | undefined;

  async function read(source: Source): Promise<Observation> {
    if (basename(source.path) !== UI_MESSAGES)
      return failed(source, "not-a-usage-source", `only ${UI_MESSAGES} carries usage events`);
    const { root: rootPath, taskId } = taskOfPath(source.path);
    const root = byPath.get(rootPath);
    if (root === undefined) return failed(source, "unknown-root", `${rootPath} is not a configured root`);
    let r: Awaited<ReturnType<typeof scanFile<typeof uiMessagesSchema>>>;
    try {
      // The scanned value is dropped once parsed: its raw bytes may be views of the file read.
      r = await scanFile(source.path, uiMessagesSchema, { views: true });
    } catch (e) {
      if (!(e instanceof ScanError)) throw e;
      return scanFailed(source, e);
    }
    // A rename replaces the file, never the one this read holds open; an in-place write races.
    if (!readWhole(r))
      return failed(source, "changed-during-read", "the document was rewritten while being read");
    const problems: Problem[] = [];
    const clients = await clientsOf(source, root, problems);
    if ("status" in clients) return clients;
    const parsed = parseUiMessages(r.value, {
      root,
      taskId,
      path: source.path,
      project: source.hint.project ?? "",
      clientAt: clients.of,
      counting,
    });
    problems.push(...parsed.problems);
    if (parsed.waiting.requests === 0) {
      const off = historyMismatch(parsed.sums, entries.get(rootPath)?.get(taskId));
      if (off !== undefined) problems.push({ path: source.path, code: "history-mismatch", detail: off });
    }
    return {
      status: "read",
      source,
      checkpoint: checkpointOf(source.path, r.statBefore),
      events: parsed.events,
      toolCalls: parsed.toolCalls,
      problems,
      signals: parsed.signals,
      edits: parsed.edits,
      activeTime: parsed.activeTime,
      deliveries: parsed.deliveries,
      sessionStarts: parsed.sessionStarts,
    };
  }

  return {
    id: CLINE_TASKS_ADAPTER_ID,
    async discover() {
      const last = memo.last?.sources;
      const d = await discoverTasks(roots, history, previous, memo);
      // An idle sweep lists the very same sources (often the very same array): the map of the
      // last one still holds them.
      if (
        d.sources !== last &&
        !(d.sources.length === previous.size && d.sources.every((s) => previous.get(s.path) === s))
      ) {
        const byPathNow = new Map<string, Source>();
        for (const s of d.sources) byPathNow.set(s.path, s);
        previous = byPathNow;
      }
      found = d.found;
      entries = d.history;
      const stats = d.stats;
      discoveryStats = stats;
      setImmediate(() => {
        if (discoveryStats === stats) discoveryStats = undefined;
      });
      entryless = d.entryless;
      return { sources: d.sources, problems: d.problems, listings: d.listings ?? [] };
    },
    collectIncremental: (source, checkpoint) => collectIfChanged(source, checkpoint, read),
    unchangedNow: (source, checkpoint) => {
      // unchangedSinceStat on discovery's stat, compared as numbers (no object per source).
      const same = discoveryStats?.sameFacts(
        source.path,
        checkpoint.size,
        checkpoint.ino,
        mtimeMsOfNs(checkpoint.mtimeNs),
      );
      return same ?? unchangedNow(source.path, checkpoint);
    },
    foundRoots: () => found,
    // Every candidate root, found or not: a root created after the start is watched from then on.
    watchPlans: Object.freeze(
      roots.map((r) => taskWatchPlan(r, (root) => entryless === undefined || entryless.has(root))),
    ),
  };
}
