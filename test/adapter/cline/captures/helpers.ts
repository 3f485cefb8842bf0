import { readdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { ROOT } from "../../../helpers/cli.ts";

export const FIXTURES = join(ROOT, "fixtures", "cline");

/** The numbers of one real capture file, read the ordinary way (tests only). */
export interface ExpectedCapture {
  readonly file: string;
  readonly captureId: string;
  readonly stage: string;
  readonly seq: number;
  readonly sessionId: string;
  readonly agentId: string;
  readonly runId: string;
  readonly iteration: number;
  readonly model: string;
  readonly provider: string;
  readonly attempt: number;
  readonly mode: string;
  readonly payloadBytes: number;
  readonly estimatedTokens: number;
  readonly messageCount: number;
  readonly messageBytes: number;
  readonly messageTokens: number;
  readonly roleCounts: Record<string, number>;
  readonly toolResults: number;
  readonly reasoningBlocks: number;
  readonly timestampMs: number;
}

export function captureDirOf(scenario: string): string {
  return join(FIXTURES, scenario, "captures");
}

export function homeOf(scenario: string): string {
  return join(FIXTURES, scenario, "home");
}

/** JSON.parse of every capture file of a fixture scenario: the independent expectation. */
export function expectedCaptures(scenario: string): ExpectedCapture[] {
  const dir = captureDirOf(scenario);
  return readdirSync(dir)
    .filter((f) => f.endsWith(".provider-request.json"))
    .sort()
    .map((file) => {
      const d = JSON.parse(readFileSync(join(dir, file), "utf8"));
      const m = /^(.+)\.([a-z_]+)\.(\d+)\.provider-request\.json$/.exec(file) as RegExpExecArray;
      return {
        file,
        captureId: m[1] as string,
        stage: m[2] as string,
        seq: Number(m[3]),
        sessionId: d.correlation.sessionId,
        agentId: d.correlation.agentId,
        runId: d.correlation.runId,
        iteration: d.correlation.iteration,
        model: d.correlation.modelId,
        provider: d.correlation.providerId,
        attempt: d.attempt,
        mode: d.mode,
        payloadBytes: d.summary.payloadBytes,
        estimatedTokens: d.summary.estimatedTokens,
        messageCount: d.summary.messages.messageCount,
        messageBytes: d.summary.messages.totalBytes,
        messageTokens: d.summary.messages.estimatedTokens,
        roleCounts: d.summary.messages.roleCounts,
        toolResults: d.summary.messages.toolResultCount,
        reasoningBlocks: d.summary.messages.reasoningBlockCount,
        timestampMs: Date.parse(d.timestamp),
      };
    });
}

export interface RecordSpec {
  stage?: string;
  attempt?: number;
  sessionId?: string;
  agentId?: string;
  runId?: string;
  iteration?: number;
  model?: string;
  provider?: string;
  payloadBytes?: number;
  roleCounts?: Record<string, number>;
  toolResults?: number;
  reasoningBlocks?: number;
  timestamp?: string;
  /** Full mode: this payload is written too. */
  payload?: unknown;
}

/** A record shaped like cline@3.0.65's (docs/cline-format.md §7.3). */
export function captureRecord(spec: RecordSpec = {}): Record<string, unknown> {
  const payloadBytes = spec.payloadBytes ?? 21288;
  const roleCounts = spec.roleCounts ?? { user: 1 };
  const messageCount = Object.values(roleCounts).reduce((a, b) => a + b, 0);
  const msgs = Object.entries(roleCounts).flatMap(([role, n]) =>
    Array.from({ length: n }, (_, i) => ({
      index: i,
      role,
      contentParts: 1,
      contentBytes: 68,
      estimatedTokens: 23,
      sha256: "dbe7a803ba03732f78ee911ca966a513156aef834e6b50df82f28581b78d4a10",
    })),
  );
  return {
    timestamp: spec.timestamp ?? "2026-11-30T05:50:52.986Z",
    captureStage: spec.stage ?? "ai_sdk_prompt",
    mode: spec.payload === undefined ? "summary" : "full",
    correlation: {
      distinctId: "0035969ec53f6e7f0fb40f08cc9ed4783aa99c2000cf1ebe4187c10dd0d8370f",
      clientName: "cline-cli",
      clientVersion: "3.0.65",
      clineCoreVersion: "0.0.86",
      sessionId: spec.sessionId ?? "1796017852909_qk1o0",
      agentId: spec.agentId ?? "agent_1796017852999_abcdef",
      conversationId: "conv_1796017853000_xyz",
      runId: spec.runId ?? "run_sgKtCP2P",
      iteration: spec.iteration ?? 1,
      providerId: spec.provider ?? "openai-compatible",
      modelId: spec.model ?? "mock-model",
    },
    summary: {
      payloadBytes,
      estimatedTokens: Math.ceil(payloadBytes / 3),
      sha256: "d02d04ea1a91e0a475b30a58a73877bbe271d5e1fb20b5db721a8271ea3750b3",
      messages: {
        messageCount,
        roleCounts,
        totalBytes: 96 * messageCount,
        estimatedTokens: 32 * messageCount,
        sha256: "42f5a2d4fade46947c7c91de0c0851159dfdd867b96054167f65307d296819f4",
        reasoningBlockCount: spec.reasoningBlocks ?? 0,
        toolResultCount: spec.toolResults ?? 0,
        largestMessages: msgs.slice(0, 3),
        messages: msgs,
      },
    },
    ...(spec.payload === undefined ? {} : { payload: spec.payload }),
    attempt: spec.attempt ?? 1,
  };
}

export function captureFileName(captureId: string, stage: string, n: number): string {
  return `${captureId}.${stage}.${n}.provider-request.json`;
}

/** Writes a capture as Cline does (pretty JSON); returns its path. */
export function writeCapture(dir: string, captureId: string, n: number, spec: RecordSpec = {}): string {
  const path = join(dir, captureFileName(captureId, spec.stage ?? "ai_sdk_prompt", n));
  writeFileSync(path, `${JSON.stringify(captureRecord(spec), null, 2)}\n`, { mode: 0o600 });
  return path;
}
