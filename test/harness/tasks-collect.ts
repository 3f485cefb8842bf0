import { createClineTasksAdapter } from "../../src/adapter/cline-tasks/adapter.ts";
import type { TaskRoot } from "../../src/adapter/cline-tasks/types.ts";
import type { EditRecord, ToolCall, ToolResult, UsageEvent } from "../../src/adapter/types.ts";

/** What one full read of a task-format data root by the task adapter gives. */
export interface Collected {
  readonly events: UsageEvent[];
  readonly toolCalls: ToolCall[];
  readonly toolResults: ToolResult[];
  readonly edits: EditRecord[];
  /** Discovery's and every source's problems, `<code>: <detail>`. */
  readonly problems: string[];
}

function root(path: string): TaskRoot {
  return { path, client: "cli", product: "Cline CLI 1.x/2.x or JetBrains", foundBy: "test" };
}

/** Read every task of `dataDir` once; events of tasks in id order, requests in time order (ground truth's order). */
export async function collectTasks(dataDir: string): Promise<Collected> {
  const adapter = createClineTasksAdapter([root(dataDir)]);
  const d = await adapter.discover();
  const events: UsageEvent[] = [];
  const toolCalls: ToolCall[] = [];
  const toolResults: ToolResult[] = [];
  const edits: EditRecord[] = [];
  const problems = d.problems.map((p) => `${p.code}: ${p.detail}`);
  for (const s of d.sources) {
    const o = await adapter.collectIncremental(s, undefined);
    if (o.status !== "read") {
      problems.push(`${o.status}: ${s.path}`);
      continue;
    }
    events.push(...o.events);
    toolCalls.push(...o.toolCalls);
    toolResults.push(...(o.signals?.toolResults ?? []));
    edits.push(...(o.edits ?? []));
    problems.push(...o.problems.map((p) => `${p.code}: ${p.detail}`));
  }
  events.sort((a, b) => a.sessionId.localeCompare(b.sessionId) || a.timestampMs - b.timestampMs);
  return { events, toolCalls, toolResults, edits, problems };
}

/** An event's four components, in the order ground truth lists them. */
export function eventComponents(e: UsageEvent): number[] {
  return [e.input, e.output, e.cacheRead, e.cacheWrite];
}

/** A ground-truth record's four components (input without cache), in the same order. */
export function recordComponents(r: {
  readonly components: { input: number; output: number; cacheRead: number; cacheWrite: number };
}): number[] {
  return [r.components.input, r.components.output, r.components.cacheRead, r.components.cacheWrite];
}
