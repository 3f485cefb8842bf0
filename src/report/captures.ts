/**
 * `cline-otel report --captures`: where prompt tokens grow. Per session, per agent run, per
 * iteration: the size of each capture stage (Cline's estimated tokens and payload bytes) and
 * its growth from the run's previous iteration, stages side by side, so the stage that grew
 * stands out (growth only at wire_request = provider serialization; at ai_sdk_prompt = Cline's
 * final build step; see Cline's provider-request-capture notes).
 *
 * Captures of the agentic compaction summarizer (no session, run or iteration; one user message,
 * on the wire also its system prompt) are kept apart: shown as compaction summarizer requests, of
 * no session, and never counted as retries (their attempts 1, 2, 3 are successive summaries). See
 * captures/summarizer.ts.
 */
import { isCompactionSummarizerCapture } from "../adapter/cline/captures/summarizer.ts";
import type { CaptureRow } from "../ledger/ledger.ts";
import { groupedInteger } from "./numbers.ts";

/** Pipeline order of Cline's capture stages; any other stage follows, alphabetically. */
export const STAGE_ORDER: readonly string[] = ["pre_build_for_api", "ai_sdk_prompt", "wire_request"];

export interface StageSize {
  /** Capture records of this stage in this iteration (more than 1: captured again, e.g. a retry). */
  readonly captures: number;
  /** Of those, records with attempt > 1. */
  readonly retries: number;
  /** The numbers of the last record (highest n): what was finally sent at this stage. */
  readonly estimatedTokens: number;
  readonly payloadBytes: number;
  readonly messageCount: number;
  readonly messageTokens: number;
  readonly toolResults: number;
  readonly reasoningBlocks: number;
  /** Change from the run's previous iteration that has this stage; null for the first. */
  readonly growthTokens: number | null;
  readonly growthBytes: number | null;
}

export interface IterationSizes {
  /** `correlation.iteration`; null when the records had none. */
  readonly iteration: number | null;
  readonly tsMs: number;
  readonly stages: Readonly<Record<string, StageSize>>;
}

/** One agent's run (a Cline `runId`) within a session: its iterations in order. */
export interface RunCaptures {
  readonly agentId: string;
  /** lead | subagent | teammate | "" (unknown). */
  readonly agent: string;
  readonly runId: string;
  readonly models: readonly string[];
  readonly providers: readonly string[];
  readonly iterations: readonly IterationSizes[];
}

export interface SessionCaptures {
  readonly sessionId: string;
  readonly project: string;
  readonly captures: number;
  readonly runs: readonly RunCaptures[];
}

export interface StageTotals {
  readonly captures: number;
  readonly retries: number;
  readonly estimatedTokens: number;
  readonly payloadBytes: number;
}

/** The summarizer's captures of one provider and model, at one stage. */
export interface SummarizerGroup {
  readonly provider: string;
  readonly model: string;
  readonly stage: string;
  /** Capture records: one per summarizer request at this stage. */
  readonly captures: number;
  /** Highest `attempt` seen: successive summaries within one Cline process. */
  readonly maxAttempt: number;
  readonly estimatedTokens: number;
  readonly payloadBytes: number;
  readonly firstMs: number;
  readonly lastMs: number;
}

export interface SummarizerCaptures {
  readonly captures: number;
  readonly groups: readonly SummarizerGroup[];
  /**
   * Always null with Cline 3.0.65: no field of these records joins them to a session exactly
   * (their correlation holds provider and model only), so none is guessed.
   */
  readonly sessionId: null;
}

export interface CapturesReport {
  /** Every stage seen, in pipeline order. */
  readonly stages: readonly string[];
  /** The agent loop's requests, per session (summarizer captures are not among them). */
  readonly sessions: readonly SessionCaptures[];
  /** Agentic compaction summarizer requests (docs/cline-format.md §14): no session, never retries. */
  readonly compactionSummarizer: SummarizerCaptures;
  readonly totals: {
    /** All capture records, summarizer ones included. */
    readonly captures: number;
    /** Per stage over all records; `retries` never counts a summarizer's attempts. */
    readonly byStage: Readonly<Record<string, StageTotals>>;
  };
}

/** The summarizer rule on a ledger row. */
export function isSummarizerRow(r: CaptureRow): boolean {
  return isCompactionSummarizerCapture({
    captureId: r.captureId,
    sessionId: r.sessionId,
    runId: r.runId,
    iteration: r.iteration,
    messageCount: r.messageCount,
    userMessages: r.roleUser,
    systemMessages: r.roleSystem,
  });
}

function summarizerCaptures(rows: readonly CaptureRow[]): SummarizerCaptures {
  const groups = new Map<string, { -readonly [K in keyof SummarizerGroup]: SummarizerGroup[K] }>();
  for (const r of rows) {
    const key = JSON.stringify([r.provider, r.model, r.stage]);
    const g = groups.get(key);
    if (g === undefined) {
      groups.set(key, {
        provider: r.provider,
        model: r.model,
        stage: r.stage,
        captures: 1,
        maxAttempt: r.attempt,
        estimatedTokens: r.estimatedTokens,
        payloadBytes: r.payloadBytes,
        firstMs: r.tsMs,
        lastMs: r.tsMs,
      });
    } else {
      g.captures++;
      g.maxAttempt = Math.max(g.maxAttempt, r.attempt);
      g.estimatedTokens += r.estimatedTokens;
      g.payloadBytes += r.payloadBytes;
      g.firstMs = Math.min(g.firstMs, r.tsMs);
      g.lastMs = Math.max(g.lastMs, r.tsMs);
    }
  }
  const rank = new Map(orderStages([...groups.values()].map((g) => g.stage)).map((s, i) => [s, i]));
  const list = [...groups.values()].sort(
    (a, b) =>
      (a.provider < b.provider ? -1 : a.provider > b.provider ? 1 : 0) ||
      (a.model < b.model ? -1 : a.model > b.model ? 1 : 0) ||
      (rank.get(a.stage) ?? 0) - (rank.get(b.stage) ?? 0),
  );
  return { captures: rows.length, groups: list, sessionId: null };
}

export function orderStages(stages: Iterable<string>): string[] {
  const rank = (s: string) => {
    const i = STAGE_ORDER.indexOf(s);
    return i === -1 ? STAGE_ORDER.length : i;
  };
  return [...new Set(stages)].sort((a, b) => rank(a) - rank(b) || (a < b ? -1 : a > b ? 1 : 0));
}

function compareIteration(a: number | null, b: number | null): number {
  if (a === b) return 0;
  if (a === null) return 1;
  if (b === null) return -1;
  return a - b;
}

/** Later record of the same iteration and stage: higher n, then higher attempt, then later ts. */
function isLater(a: CaptureRow, b: CaptureRow): boolean {
  return a.seq !== b.seq ? a.seq > b.seq : a.attempt !== b.attempt ? a.attempt > b.attempt : a.tsMs > b.tsMs;
}

function runSizes(rows: readonly CaptureRow[]): IterationSizes[] {
  const byIteration = new Map<number | null, CaptureRow[]>();
  for (const r of rows) {
    const list = byIteration.get(r.iteration);
    if (list === undefined) byIteration.set(r.iteration, [r]);
    else list.push(r);
  }
  const iterations = [...byIteration.keys()].sort(compareIteration);
  const previous = new Map<string, { tokens: number; bytes: number }>();
  return iterations.map((it) => {
    const list = byIteration.get(it) ?? [];
    const byStage = new Map<string, { last: CaptureRow; captures: number; retries: number }>();
    for (const r of list) {
      const e = byStage.get(r.stage);
      if (e === undefined) byStage.set(r.stage, { last: r, captures: 1, retries: r.attempt > 1 ? 1 : 0 });
      else {
        e.captures++;
        if (r.attempt > 1) e.retries++;
        if (isLater(r, e.last)) e.last = r;
      }
    }
    const stages: Record<string, StageSize> = {};
    for (const stage of orderStages(byStage.keys())) {
      const e = byStage.get(stage);
      if (e === undefined) continue;
      const prev = previous.get(stage);
      stages[stage] = {
        captures: e.captures,
        retries: e.retries,
        estimatedTokens: e.last.estimatedTokens,
        payloadBytes: e.last.payloadBytes,
        messageCount: e.last.messageCount,
        messageTokens: e.last.messageTokens,
        toolResults: e.last.toolResults,
        reasoningBlocks: e.last.reasoningBlocks,
        growthTokens: prev === undefined ? null : e.last.estimatedTokens - prev.tokens,
        growthBytes: prev === undefined ? null : e.last.payloadBytes - prev.bytes,
      };
      previous.set(stage, { tokens: e.last.estimatedTokens, bytes: e.last.payloadBytes });
    }
    return { iteration: it, tsMs: Math.min(...list.map((r) => r.tsMs)), stages };
  });
}

function distinct(xs: Iterable<string>): string[] {
  return [...new Set(xs)];
}

/**
 * Groups capture rows (any order) into sessions -> runs (agent id + run id) -> iterations.
 * Sessions and runs are ordered by their first capture's time.
 */
export function buildCapturesReport(rows: readonly CaptureRow[]): CapturesReport {
  const sessions = new Map<string, Map<string, CaptureRow[]>>();
  const byStage: Record<
    string,
    { captures: number; retries: number; estimatedTokens: number; payloadBytes: number }
  > = {};
  const summarizer: CaptureRow[] = [];
  for (const r of rows) {
    const isSummary = isSummarizerRow(r);
    let t = byStage[r.stage];
    if (t === undefined) {
      t = { captures: 0, retries: 0, estimatedTokens: 0, payloadBytes: 0 };
      byStage[r.stage] = t;
    }
    t.captures++;
    if (r.attempt > 1 && !isSummary) t.retries++;
    t.estimatedTokens += r.estimatedTokens;
    t.payloadBytes += r.payloadBytes;
    if (isSummary) {
      summarizer.push(r);
      continue;
    }
    let runs = sessions.get(r.sessionId);
    if (runs === undefined) {
      runs = new Map();
      sessions.set(r.sessionId, runs);
    }
    const key = JSON.stringify([r.agentId, r.runId]);
    const list = runs.get(key);
    if (list === undefined) runs.set(key, [r]);
    else list.push(r);
  }
  const firstTs = (rs: readonly CaptureRow[]) => Math.min(...rs.map((r) => r.tsMs));
  const out = [...sessions.entries()]
    .map(([sessionId, runs]) => {
      const groups = [...runs.values()].sort((a, b) => firstTs(a) - firstTs(b));
      const all = groups.flat();
      const session: SessionCaptures = {
        sessionId,
        project: all.find((r) => r.project !== "")?.project ?? "",
        captures: all.length,
        runs: groups.map((g) => {
          const first = g[0] as CaptureRow;
          return {
            agentId: first.agentId,
            agent: first.agent,
            runId: first.runId,
            models: distinct(g.map((r) => r.model)),
            providers: distinct(g.map((r) => r.provider)),
            iterations: runSizes(g),
          };
        }),
      };
      return { session, first: firstTs(all) };
    })
    .sort((a, b) => a.first - b.first)
    .map((x) => x.session);
  const stages = orderStages(Object.keys(byStage));
  const ordered: Record<string, StageTotals> = {};
  for (const s of stages) ordered[s] = byStage[s] as StageTotals;
  return {
    stages,
    sessions: out,
    compactionSummarizer: summarizerCaptures(summarizer),
    totals: { captures: rows.length, byStage: ordered },
  };
}

function fmt(n: number): string {
  return Number.isInteger(n) ? groupedInteger(n) : n.toLocaleString("en-US");
}

function signed(n: number | null): string {
  if (n === null) return "-";
  return n > 0 ? `+${fmt(n)}` : n < 0 ? `-${fmt(-n)}` : "0";
}

function table(head: string[], body: string[][], leftCols: number, indent: string): string[] {
  const all = [head, ...body];
  const widths = head.map((_, i) => Math.max(...all.map((row) => (row[i] ?? "").length)));
  const line = (row: string[]) =>
    indent +
    row
      .map((c, i) => (i < leftCols ? c.padEnd(widths[i] ?? 0) : c.padStart(widths[i] ?? 0)))
      .join("  ")
      .trimEnd();
  return [line(head), indent + widths.map((w) => "-".repeat(w)).join("  "), ...body.map(line)];
}

/**
 * Plain text: one block per session and run; one line per iteration with, for every stage,
 * its estimated tokens, their growth, its payload bytes and their growth.
 */
export function renderCapturesTable(report: CapturesReport): string {
  if (report.sessions.length === 0 && report.compactionSummarizer.captures === 0) {
    return "No provider-request captures in the ledger. Cline writes them only with CLINE_CAPTURE_PROVIDER_REQUEST=summary|full and CLINE_CAPTURE_DIR or CLINE_DATA_DIR set; `cline-otel paths` and --capture-dir tell where cline-otel looks.";
  }
  const lines: string[] = [];
  for (const s of report.sessions) {
    lines.push(
      `Session ${s.sessionId}${s.project !== "" ? `  project ${s.project}` : ""}  (${s.captures} captures)`,
    );
    for (const run of s.runs) {
      const stages = orderStages(run.iterations.flatMap((it) => Object.keys(it.stages)));
      const who = [run.agent === "" ? "agent ?" : run.agent, run.agentId, `run ${run.runId}`]
        .filter((x) => x !== "")
        .join("  ");
      lines.push(
        `  ${who}  ${distinct([...run.providers, ...run.models])
          .filter((x) => x !== "")
          .join(" ")}`,
      );
      const head = ["Iter", ...stages.flatMap((st) => [`${st} tokens`, "Δ", "bytes", "Δ"])];
      const body = run.iterations.map((it) => [
        it.iteration === null ? "?" : String(it.iteration),
        ...stages.flatMap((st) => {
          const z = it.stages[st];
          if (z === undefined) return ["", "", "", ""];
          const again = z.captures > 1 ? ` (×${z.captures})` : "";
          return [
            `${fmt(z.estimatedTokens)}${again}`,
            signed(z.growthTokens),
            fmt(z.payloadBytes),
            signed(z.growthBytes),
          ];
        }),
      ]);
      lines.push(...table(head, body, 1, "  "), "");
    }
  }
  lines.push(...renderSummarizer(report.compactionSummarizer));
  const head = ["Stage", "Captures", "Retries", "Est. tokens", "Payload bytes"];
  const body = report.stages.map((st) => {
    const t = report.totals.byStage[st] as StageTotals;
    return [st, fmt(t.captures), fmt(t.retries), fmt(t.estimatedTokens), fmt(t.payloadBytes)];
  });
  lines.push("Totals by stage (all captures)", ...table(head, body, 1, ""));
  return lines.join("\n");
}

function isoMinute(ms: number): string {
  return ms > 0 ? new Date(ms).toISOString().slice(0, 19).replace("T", " ") : "?";
}

/** The summarizer block: what was sent, and why it has no session. */
function renderSummarizer(s: SummarizerCaptures): string[] {
  if (s.captures === 0) return [];
  const head = [
    "Provider",
    "Model",
    "Stage",
    "Requests",
    "Max attempt",
    "Est. tokens",
    "Payload bytes",
    "First",
    "Last",
  ];
  const body = s.groups.map((g) => [
    g.provider,
    g.model,
    g.stage,
    fmt(g.captures),
    fmt(g.maxAttempt),
    fmt(g.estimatedTokens),
    fmt(g.payloadBytes),
    isoMinute(g.firstMs),
    isoMinute(g.lastMs),
  ]);
  return [
    `Compaction summarizer requests (agentic context compaction, ${s.captures} captures)`,
    ...table(head, body, 3, "  "),
    "  Not retries: a process's successive summaries share one capture id as attempts 1, 2, 3.",
    "  No session: Cline 3.0.65 writes only provider and model into their correlation, so nothing",
    "  joins them to a session exactly. Cline records their usage nowhere; cline.compactions",
    '  {cline.compaction.strategy="agentic"} counts how many such calls happened per session.',
    "",
  ];
}
