/**
 * Generates realistic Cline CLI histories for the benchmarks: `<sessions>/<rootId>/` folders with
 * the lead `<rootId>.messages.json`, its sidecar, some sub-agent and teammate documents, and a
 * `sessions.db` index naming most of them (docs/cline-format.md §3-6). Documents are written the way
 * Cline writes them (`JSON.stringify(doc, null, 2)` + "\n"), in pieces, so a 1 GB document never
 * has to exist as one string. Everything is deterministic for a given seed.
 *
 * Shapes that matter for speed: tool results hold most of the bytes (whole files, command output,
 * with quotes, backslashes, escapes and non-ASCII text); one assistant message per model call with
 * `metrics`, 0-3 tool_use blocks, one tool-result user message per call; a few display-only error
 * messages without metrics. Edits and commands are the real CLI's shapes (cli-tool-calls.ts): editor
 * creates, replacements and inserts (apply_patch for a gpt model), some denied or failed, and commits.
 */
import { closeSync, mkdirSync, openSync, writeFileSync, writeSync } from "node:fs";
import { join } from "node:path";
import Database from "better-sqlite3";
import { CLINE_SESSIONS_DDL, sessionRow } from "../../test/adapter/cline/helpers/cline-db.ts";
import { commandCall, editCall, type PlannedCall } from "./cli-tool-calls.ts";
import { prng } from "./messages-doc.ts";

export type Rand = () => number;

export interface ClineTree {
  readonly home: string;
  readonly clineDir: string;
  readonly sessionsDir: string;
  readonly dbDir: string;
}

export function clineTreeAt(home: string): ClineTree {
  const clineDir = join(home, ".cline");
  return {
    home,
    clineDir,
    sessionsDir: join(clineDir, "data", "sessions"),
    dbDir: join(clineDir, "data", "db"),
  };
}

/** A standard normal draw (Box-Muller). */
function gauss(rand: Rand): number {
  const u = Math.max(rand(), 1e-12);
  return Math.sqrt(-2 * Math.log(u)) * Math.cos(2 * Math.PI * rand());
}

/** Log-normal with the given median, clamped: sizes of tool results and documents are heavy-tailed. */
export function logNormal(rand: Rand, medianValue: number, sigma: number, min: number, max: number): number {
  return Math.min(max, Math.max(min, Math.round(medianValue * Math.exp(sigma * gauss(rand)))));
}

const WORDS = (
  "the a of to and in is it that for on with as this was by be are from or an at not file function " +
  "value error test build config module import export return const let type session token cache model " +
  "request response provider message content result tool command async await promise string number"
).split(" ");

/**
 * The text tool results are cut from: source code (quotes, backslashes), prose, `ls -l` and
 * compiler output, JSON log lines (escaped quotes once encoded), tabs, CRs and non-ASCII.
 */
export function makeReservoir(rand: Rand, chars = 8 * 1024 * 1024): string {
  const pick = (): string => WORDS[Math.floor(rand() * WORDS.length)] as string;
  const words = (k: number): string => Array.from({ length: k }, pick).join(" ");
  const lines: string[] = [];
  let len = 0;
  for (let i = 0; len < chars; i++) {
    const r = rand();
    let line: string;
    if (r < 0.35) {
      const ind = "  ".repeat(Math.floor(rand() * 4));
      line = `${ind}const ${pick()}_${i} = await ${pick()}("${words(2)}", '${pick()}', { re: /\\d+\\.ts$/ }); // ${words(3)}`;
    } else if (r < 0.55) {
      line = `${words(6 + Math.floor(rand() * 14))}.`;
    } else if (r < 0.7) {
      line = `-rw-r--r--  1 dev staff ${Math.floor(rand() * 99999)} Nov 30 07:${10 + (i % 50)} src/${pick()}/${pick()}_${i}.ts`;
    } else if (r < 0.82) {
      line = JSON.stringify({
        level: "info",
        msg: words(5),
        id: i,
        ok: rand() < 0.5,
        path: `C:\\tmp\\${pick()}`,
      });
    } else if (r < 0.92) {
      line = `src/${pick()}.ts(${i % 400},${i % 80}): error TS2345: Argument of type '${pick()}' is not assignable.`;
    } else {
      line = `\t${words(4)} \u00e9\u00e8\u00fc \u4e2d\u6587\u6d4b\u8bd5 \u{1f600} ${i}\r`;
    }
    lines.push(line);
    len += line.length + 1;
  }
  return lines.join("\n");
}

/** A line-aligned slice of about `chars` characters (never splits a surrogate pair or an escape). */
export function bodyText(reservoir: string, rand: Rand, chars: number): string {
  if (chars >= reservoir.length) {
    return reservoir
      .repeat(Math.ceil(chars / reservoir.length))
      .slice(0, chars)
      .replace(/[\ud800-\udbff]$/, "");
  }
  let start = reservoir.indexOf("\n", Math.floor(rand() * (reservoir.length - chars)));
  start = start < 0 ? 0 : start + 1;
  let end = reservoir.indexOf("\n", start + chars);
  if (end < 0) end = reservoir.length;
  return reservoir.slice(start, end);
}

const MODELS = [
  { id: "claude-sonnet-4-5-20250929", provider: "anthropic", family: "claude-sonnet" },
  { id: "gpt-5-mini", provider: "openai" },
  { id: "qwen3-coder", provider: "openai-compatible" },
] as const;

const TOOLS = ["read_files", "run_commands", "editor", "search_codebase", "fetch_web_content"] as const;

export interface DocSpec {
  readonly path: string;
  readonly sessionId: string;
  readonly agent: "lead" | "subagent" | "teammate";
  readonly rootId: string;
  readonly agentId?: string;
  /** Stop adding turns once the document is about this large (characters, ~bytes). */
  readonly targetBytes: number;
  /** Turns added after the target was reached: a rewrite with `extraTurns + 1` appends exactly one turn. */
  readonly extraTurns?: number;
  /** Median tool-result size (characters); the spread is log-normal. */
  readonly toolResultMedian?: number;
  /** Size of a lead document's `system_prompt` (default 12,000 characters). */
  readonly systemPromptChars?: number;
  readonly startTs: number;
  readonly seed: number;
  readonly reservoir: string;
}

export interface DocStats {
  readonly bytes: number;
  readonly messages: number;
  /** Assistant messages with metrics: usage events. */
  readonly events: number;
  /** tool_use blocks: tool calls. */
  readonly toolUses: number;
  /** Editing calls (editor, apply_patch) by what became of them: applied, denied (is_error), failed. */
  readonly edits: { readonly applied: number; readonly denied: number; readonly failed: number };
  /** run_commands calls that committed (`git commit`) and succeeded. */
  readonly commits: number;
}

/** Buffers small strings and writes ~4 MiB at a time. */
class Sink {
  private parts: string[] = [];
  private pending = 0;
  bytes = 0;
  chars = 0;
  constructor(private readonly fd: number) {}
  put(s: string): void {
    this.parts.push(s);
    this.pending += s.length;
    this.chars += s.length;
    if (this.pending >= 4 * 1024 * 1024) this.flush();
  }
  flush(): void {
    if (this.parts.length === 0) return;
    this.bytes += writeSync(this.fd, this.parts.join(""));
    this.parts = [];
    this.pending = 0;
  }
}

/** Re-indents `JSON.stringify(x, null, 2)` output one level deeper (encoded strings hold no raw newline). */
function indented(value: unknown, by: string): string {
  return by + JSON.stringify(value, null, 2).replace(/\n/g, `\n${by}`);
}

const MARK = "\u0000BODY\u0000";

/** Writes `value` (pretty, indented) with each MARK string replaced by the next encoded body. */
function putWithBodies(sink: Sink, value: unknown, by: string, bodies: string[]): void {
  const parts = indented(value, by).split(JSON.stringify(MARK));
  parts.forEach((p, i) => {
    sink.put(p);
    if (i < parts.length - 1) sink.put(JSON.stringify(bodies[i] as string));
  });
}

/**
 * Writes one messages document in place (truncate + write, as Cline does) and returns what a
 * collector must find in it.
 */
export function writeDocument(spec: DocSpec): DocStats {
  const rand = prng(spec.seed);
  const res = spec.reservoir;
  const model = MODELS[Math.floor(rand() * MODELS.length)] as (typeof MODELS)[number];
  const resultMedian = spec.toolResultMedian ?? 2500;
  const maxResult = Math.max(200, Math.min(12 * 1024 * 1024, Math.floor(spec.targetBytes / 3)));
  const text = (median: number, max: number): string =>
    bodyText(res, rand, logNormal(rand, median, 0.8, 20, max));
  const fd = openSync(spec.path, "w");
  const sink = new Sink(fd);
  let messages = 0;
  let events = 0;
  let toolUses = 0;
  let commits = 0;
  const edits = { applied: 0, denied: 0, failed: 0 };
  try {
    const head: Record<string, unknown> = {
      version: 1,
      updated_at: new Date(spec.startTs + 3_600_000).toISOString(),
      agent: spec.agent,
      sessionId: spec.sessionId,
    };
    if (spec.agent !== "lead") head.taskType = spec.agent === "subagent" ? "subagent_task" : "team";
    head.origin = {
      source: "cli",
      mode: spec.agent === "lead" ? "user" : spec.agent === "subagent" ? "subagent" : "team",
      sessionId: spec.sessionId,
      version: "3.0.65",
      ...(spec.agent === "lead" ? {} : { parentThreadId: spec.rootId, subagent: spec.agentId }),
    };
    const headText = JSON.stringify(head, null, 2);
    sink.put(`${headText.slice(0, -2)},\n  "messages": [\n`);

    let ts = spec.startTs;
    let sep = "";
    const emit = (msg: unknown, bodies: string[]): void => {
      sink.put(sep);
      sep = ",\n";
      putWithBodies(sink, msg, "    ", bodies);
      messages++;
    };
    emit(
      {
        id: `${spec.sessionId.slice(0, 8)}-5d4f-4c1a-9a55-0f7a3c1e2b11`,
        role: "user",
        ts,
        content: [{ type: "text", text: MARK }],
      },
      [`<user_input mode="act">${text(400, 4000)}</user_input>`],
    );
    let turn = 0;
    let extra = spec.extraTurns ?? 0;
    for (;;) {
      // Turns past the target are the appended ones: each is a billed call (an event), always.
      const appended = sink.chars >= spec.targetBytes;
      if (appended) {
        if (extra === 0) break;
        extra--;
      }
      turn++;
      ts += 1 + Math.floor(rand() * 20_000);
      const r = rand();
      if (r < 0.01 && !appended) {
        // A provider error: stored as a display-only assistant message without metrics.
        emit(
          {
            id: `error_${turn.toString(36)}-${spec.seed.toString(36)}`,
            role: "assistant",
            ts,
            content: [{ type: "text", text: MARK }],
            modelInfo: model,
            metadata: { displayOnly: true, displayRole: "error" },
          },
          [`429 rate limited: ${text(80, 400)}`],
        );
        continue;
      }
      if (r < 0.05) {
        emit({ id: `msg_u${turn.toString(36)}`, role: "user", ts, content: [{ type: "text", text: MARK }] }, [
          text(300, 3000),
        ]);
        ts += 1 + Math.floor(rand() * 2000);
      }
      const nTools = rand() < 0.12 ? 0 : 1 + (rand() < 0.2 ? 1 : 0) + (rand() < 0.05 ? 1 : 0);
      const uses: { id: string; name: string; planned?: PlannedCall }[] = [];
      const content: unknown[] = [];
      const bodies: string[] = [];
      if (rand() < 0.6) {
        content.push({ type: "thinking", thinking: MARK });
        bodies.push(text(600, 8000));
      }
      content.push({ type: "text", text: MARK });
      bodies.push(text(250, 3000));
      for (let k = 0; k < nTools; k++) {
        const tool = TOOLS[Math.floor(rand() * TOOLS.length)] as string;
        const id = `toolu_${spec.seed.toString(36)}_${turn.toString(36)}_${k}`;
        // Edits and commands as the real CLI stores them (cli-tool-calls.ts); their results below.
        const planned =
          tool === "editor"
            ? editCall(res, rand, model.id, turn, MARK)
            : tool === "run_commands"
              ? commandCall(
                  rand,
                  turn,
                  () => bodyText(res, rand, logNormal(rand, resultMedian, 1.7, 40, maxResult)),
                  MARK,
                )
              : undefined;
        const name = planned?.name ?? tool;
        uses.push(planned === undefined ? { id, name } : { id, name, planned });
        let input: unknown;
        if (planned !== undefined) {
          input = planned.input;
          bodies.push(...planned.bodies);
        } else if (name === "read_files") input = { paths: [`src/module_${turn}.ts`] };
        else input = { query: `where is ${turn} defined` };
        content.push({ type: "tool_use", id, name, input });
      }
      const inputTokens = 1000 + Math.floor(rand() * 180_000);
      const cacheRead = Math.floor(rand() * inputTokens * 0.8);
      const cacheWrite = Math.floor(rand() * (inputTokens - cacheRead) * 0.5);
      const metrics =
        rand() < 0.005 && !appended
          ? undefined
          : {
              inputTokens,
              outputTokens: 1 + Math.floor(rand() * 6000),
              cacheReadTokens: cacheRead,
              cacheWriteTokens: cacheWrite,
              ...(model.provider === "anthropic" ? { cost: Math.round(rand() * 1e8) / 1e8 } : {}),
            };
      emit(
        {
          id: `msg_${spec.seed.toString(36).slice(-3)}${turn.toString(36).padStart(5, "0")}`,
          role: "assistant",
          ts,
          content,
          modelInfo: model,
          ...(metrics ? { metrics } : {}),
        },
        bodies,
      );
      if (metrics) events++;
      toolUses += uses.length;
      for (const [k, use] of uses.entries()) {
        ts += 1 + Math.floor(rand() * 3000);
        const p = use.planned;
        if (p !== undefined) {
          if (p.kind === "commit" && p.fate === "applied") commits++;
          if (p.kind !== "commit" && p.kind !== "other") edits[p.fate]++;
        }
        const resultBodies = p?.resultBodies ?? [
          bodyText(res, rand, logNormal(rand, resultMedian, 1.7, 40, maxResult)),
        ];
        const resultContent = p?.result ?? [{ query: use.name, result: MARK, success: rand() < 0.95 }];
        const block: Record<string, unknown> = {
          type: "tool_result",
          tool_use_id: use.id,
          name: use.name,
          content: resultContent,
        };
        if (p?.fate === "denied") block.is_error = true;
        emit(
          {
            id: `msg_${spec.seed.toString(36).slice(-3)}${turn.toString(36).padStart(4, "0")}r${k}`,
            role: "user",
            ts,
            content: [block],
          },
          resultBodies,
        );
      }
    }
    sink.put("\n  ]");
    if (spec.agent === "lead")
      sink.put(
        `,\n  "system_prompt": ${JSON.stringify(bodyText(res, rand, spec.systemPromptChars ?? 12_000))}`,
      );
    sink.put("\n}\n");
    sink.flush();
  } finally {
    closeSync(fd);
  }
  return { bytes: sink.bytes, messages, events, toolUses, edits, commits };
}

export interface CorpusSpec {
  readonly sessions: number;
  /** Approximate total size of all documents. */
  readonly totalBytes: number;
  /** Share of sessions with sub-agent / teammate documents (default 0.15). */
  readonly subagentShare?: number;
  /** Share of sessions missing from sessions.db (found by the walk via their sidecar; default 0.05). */
  readonly unindexedShare?: number;
  /** Spread of document sizes (log-normal sigma, default 1.6). */
  readonly sizeSigma?: number;
  /** Largest document, as a share of totalBytes (default 0.05). */
  readonly maxDocShare?: number;
  readonly toolResultMedian?: number;
  readonly systemPromptChars?: number;
  readonly seed?: number;
  /** Epoch ms of the first session id. */
  readonly startMs?: number;
}

/**
 * The small real-CLI-shaped sessions of the cli, ratios and delivered cases: ~2 KiB of target per
 * session, small tool results, every session 200 days old (older than any series TTL and outside
 * report's default window).
 */
export function smallSessionsSpec(sessions: number): CorpusSpec {
  return {
    sessions,
    totalBytes: sessions * 2 * 1024,
    sizeSigma: 0.8,
    maxDocShare: 0.01,
    toolResultMedian: 300,
    systemPromptChars: 5000,
    seed: 15,
    startMs: Date.now() - 200 * 24 * 3600_000,
  };
}

export interface CorpusDoc {
  readonly spec: DocSpec;
  readonly stats: DocStats;
}

/** What was written. `docs` and `events` follow later rewrites made with appendToDocument. */
export interface Corpus {
  readonly tree: ClineTree;
  readonly rootIds: readonly string[];
  docs: CorpusDoc[];
  readonly bytes: number;
  events: number;
  readonly toolUses: number;
  readonly generateMs: number;
}

const ALNUM = "abcdefghijklmnopqrstuvwxyz0123456789";
function randId(rand: Rand, n: number): string {
  let s = "";
  for (let i = 0; i < n; i++) s += ALNUM[Math.floor(rand() * ALNUM.length)];
  return s;
}

/** Sizes drawn log-normal, scaled so they sum to about `total`, none above `max`. */
export function documentSizes(rand: Rand, n: number, total: number, sigma: number, max: number): number[] {
  const w = Array.from({ length: n }, () => Math.exp(sigma * gauss(rand)));
  let sizes = w;
  for (let iter = 0; iter < 8; iter++) {
    const sum = sizes.reduce((a, b) => a + b, 0);
    sizes = sizes.map((x) => Math.min(max, (x * total) / sum));
  }
  return sizes.map((x) => Math.max(4096, Math.round(x)));
}

/** Writes a whole history under `home` and returns what it holds. */
export function writeCorpus(home: string, spec: CorpusSpec): Corpus {
  const t0 = performance.now();
  const rand = prng(spec.seed ?? 42);
  const tree = clineTreeAt(home);
  mkdirSync(tree.sessionsDir, { recursive: true });
  mkdirSync(tree.dbDir, { recursive: true });
  const reservoir = makeReservoir(rand);
  const subShare = spec.subagentShare ?? 0.15;
  // Sub-agent documents take part of their session's bytes; sizes are per session.
  const sizes = documentSizes(
    rand,
    spec.sessions,
    spec.totalBytes,
    spec.sizeSigma ?? 1.6,
    Math.max(8192, spec.totalBytes * (spec.maxDocShare ?? 0.05)),
  );
  const startMs = spec.startMs ?? 1_790_000_000_000;
  const docs: CorpusDoc[] = [];
  const rootIds: string[] = [];
  const rows: Record<string, string | number | null>[] = [];
  let seed = (spec.seed ?? 42) * 100_003;
  for (let s = 0; s < spec.sessions; s++) {
    const started = startMs + s * 600_000 + Math.floor(rand() * 300_000);
    const rootId = `${started}_${randId(rand, 5)}`;
    rootIds.push(rootId);
    const dir = join(tree.sessionsDir, rootId);
    mkdirSync(dir);
    const cwd = `/home/dev/src/project-${Math.floor(rand() * 24)}`;
    const size = sizes[s] as number;
    const subs: { agentId: string; file: string; sessionId: string; agent: "subagent" | "teammate" }[] = [];
    if (rand() < subShare) {
      const n = 1 + Math.floor(rand() * 3);
      for (let k = 0; k < n; k++) {
        if (rand() < 0.25) {
          const r6 = randId(rand, 6);
          subs.push({
            agentId: "helper",
            file: `helper__${r6}.messages.json`,
            sessionId: `${rootId}__teamtask__helper__${r6}`,
            agent: "teammate",
          });
        } else {
          const agentId = `agent_${started + k}_${randId(rand, 6)}`;
          subs.push({
            agentId,
            file: `${agentId}.messages.json`,
            sessionId: `${rootId}__${agentId}`,
            agent: "subagent",
          });
        }
      }
    }
    const subBytes = subs.length === 0 ? 0 : Math.floor(size * 0.3);
    const leadPath = join(dir, `${rootId}.messages.json`);
    const leadSpec: DocSpec = {
      path: leadPath,
      sessionId: rootId,
      agent: "lead",
      rootId,
      targetBytes: size - subBytes,
      startTs: started,
      seed: ++seed,
      reservoir,
      ...(spec.toolResultMedian !== undefined ? { toolResultMedian: spec.toolResultMedian } : {}),
      ...(spec.systemPromptChars !== undefined ? { systemPromptChars: spec.systemPromptChars } : {}),
    };
    docs.push({ spec: leadSpec, stats: writeDocument(leadSpec) });
    writeFileSync(
      join(dir, `${rootId}.json`),
      `${JSON.stringify(
        {
          version: 1,
          session_id: rootId,
          source: "cli",
          pid: 4242,
          started_at: new Date(started).toISOString(),
          status: "completed",
          interactive: false,
          provider: "anthropic",
          model: "claude-sonnet-4-5-20250929",
          cwd,
          workspace_root: cwd,
          prompt: bodyText(reservoir, rand, 300),
          metadata: { usage: { inputTokens: 123456, outputTokens: 789 } },
          messages_path: leadPath,
        },
        null,
        2,
      )}\n`,
    );
    const indexed = rand() >= (spec.unindexedShare ?? 0.05);
    if (indexed) rows.push(sessionRow(rootId, { cwd, workspace_root: cwd, messages_path: leadPath }));
    for (const sub of subs) {
      const p = join(dir, sub.file);
      const subSpec: DocSpec = {
        path: p,
        sessionId: sub.sessionId,
        agent: sub.agent,
        rootId,
        agentId: sub.agentId,
        targetBytes: Math.max(2048, Math.floor(subBytes / subs.length)),
        startTs: started + 60_000,
        seed: ++seed,
        reservoir,
        ...(spec.toolResultMedian !== undefined ? { toolResultMedian: spec.toolResultMedian } : {}),
      };
      docs.push({ spec: subSpec, stats: writeDocument(subSpec) });
      if (indexed) {
        rows.push(
          sessionRow(sub.sessionId, {
            cwd,
            workspace_root: cwd,
            is_subagent: 1,
            parent_session_id: rootId,
            parent_agent_id: sub.agent === "teammate" ? "lead" : `agent_${started}_lead00`,
            agent_id: sub.agentId,
            messages_path: p,
            metadata_json: JSON.stringify({ sessionHistoryOrigin: { mode: sub.agent }, title: "task" }),
          }),
        );
      }
    }
  }
  writeIndex(tree.dbDir, rows);
  let bytes = 0;
  let events = 0;
  let toolUses = 0;
  for (const d of docs) {
    bytes += d.stats.bytes;
    events += d.stats.events;
    toolUses += d.stats.toolUses;
  }
  return { tree, rootIds, docs, bytes, events, toolUses, generateMs: performance.now() - t0 };
}

/** Writes `<dbDir>/sessions.db` with Cline's DDL (WAL mode, as Cline leaves it). */
export function writeIndex(dbDir: string, rows: readonly Record<string, string | number | null>[]): void {
  const db = new Database(join(dbDir, "sessions.db"));
  try {
    db.pragma("journal_mode = WAL");
    db.exec(CLINE_SESSIONS_DDL);
    const first = rows[0];
    if (first === undefined) return;
    const cols = Object.keys(first);
    const ins = db.prepare(
      `INSERT INTO sessions (${cols.join(", ")}) VALUES (${cols.map((c) => `@${c}`).join(", ")})`,
    );
    db.transaction(() => {
      for (const r of rows) ins.run(r);
    })();
  } finally {
    db.close();
  }
}

/** Appends `more` turns to `corpus.docs[index]` (see appendTurns) and keeps the corpus totals right. */
export function appendToDocument(corpus: Corpus, index: number, more: number): CorpusDoc {
  const old = corpus.docs[index];
  if (old === undefined) throw new RangeError(`no document ${index}`);
  const next = appendTurns(old, more);
  corpus.docs[index] = next;
  corpus.events += next.stats.events - old.stats.events;
  return next;
}

/**
 * Rewrites a corpus document in place with `more` extra turns (same seed, so the old messages
 * keep their ids and the new ones are appended, as when Cline saves after another iteration).
 */
export function appendTurns(doc: CorpusDoc, more: number): CorpusDoc {
  const spec: DocSpec = { ...doc.spec, extraTurns: (doc.spec.extraTurns ?? 0) + more };
  return { spec, stats: writeDocument(spec) };
}
