/**
 * The GenAI histograms' policy and layout (src/ledger/tables/genai.ts): which metrics, their
 * bucket bounds, the dims of a series, and where each histogram's totals and buckets sit in a
 * `genai_rows` row (a request row: input, output, duration; a tool row: one duration).
 */
export type GenaiMetric = "token_usage" | "operation_duration" | "tool_duration";

/**
 * Explicit bucket boundaries (inclusive upper bounds). Token usage and operation duration are the
 * GenAI semantic conventions' own; tool durations add three longer bounds (commands run minutes).
 * Persisted as bucket indexes (column bK of genai_rows counts bucket K): they change only
 * with a migration that re-buckets.
 */
export const GENAI_TOKEN_BOUNDARIES: readonly number[] = Object.freeze([
  1, 4, 16, 64, 256, 1024, 4096, 16384, 65536, 262144, 1048576, 4194304, 16777216, 67108864,
]);

export const GENAI_DURATION_BOUNDARIES: readonly number[] = Object.freeze([
  0.01, 0.02, 0.04, 0.08, 0.16, 0.32, 0.64, 1.28, 2.56, 5.12, 10.24, 20.48, 40.96, 81.92,
]);

export const TOOL_DURATION_BOUNDARIES: readonly number[] = Object.freeze([
  ...GENAI_DURATION_BOUNDARIES,
  163.84,
  327.68,
  655.36,
]);

export const GENAI_BOUNDARIES: Readonly<Record<GenaiMetric, readonly number[]>> = Object.freeze({
  token_usage: GENAI_TOKEN_BOUNDARIES,
  operation_duration: GENAI_DURATION_BOUNDARIES,
  tool_duration: TOOL_DURATION_BOUNDARIES,
});

/**
 * Bucket count columns of a genai_rows row's first histogram (b0..b17: a request's input tokens,
 * or a tool's duration): the longest boundary list + 1. A metric uses its first boundaries + 1 of
 * them; the others stay 0. A request's output tokens have o0..o14, its duration d0..d14. Fixed
 * by the schema: a longer list needs a migration that adds columns.
 */
export const GENAI_BUCKET_COLUMNS = 18;

/** The bucket columns in order: `b0, b1, ...`. */
export const BUCKETS = Array.from({ length: GENAI_BUCKET_COLUMNS }, (_, i) => `b${i}`);

export interface GenaiDims {
  readonly sessionId: string;
  /** `cline.client` ('' for a series from before schema v2, or an adapter that does not say). */
  readonly client: string;
  /**
   * The session's project, not a key: the first one a series was written with, for its `vcs.*`
   * (a cumulative series keeps its attribute set).
   */
  readonly project: string;
  readonly model: string;
  readonly provider: string;
  /** token_usage: input | output; else "". */
  readonly tokenType: string;
  /** tool_duration only; else "". */
  readonly toolName: string;
  /** tool_duration: success | failure | unknown; else "". */
  readonly outcome: string;
}

/** One GenAI histogram series (or its delta over a window). Values: tokens, or seconds. */
export interface GenaiSeriesRow extends GenaiDims {
  readonly metric: GenaiMetric;
  readonly count: number;
  readonly sum: number;
  readonly min: number;
  readonly max: number;
  /** Per bucket, length = boundaries + 1. */
  readonly counts: readonly number[];
  readonly firstMs: number;
  readonly updatedMs: number;
  readonly lastEventMs: number;
}

/** The dims a request's histograms share (token type aside). */
export function chatDims(r: {
  readonly sessionId: string;
  readonly client?: string | undefined;
  readonly project: string;
  readonly model: string;
  readonly provider: string;
}): Omit<GenaiDims, "tokenType"> {
  return {
    sessionId: r.sessionId,
    client: r.client ?? "",
    project: r.project,
    model: r.model,
    provider: r.provider,
    toolName: "",
    outcome: "",
  };
}

/**
 * One histogram's columns in a genai_rows row: `count, sum, min, max, first_ms, updated_ms,
 * last_event_ms` behind a prefix, then its bucket columns. NULL count = no such series (yet).
 */
export interface Histogram {
  readonly prefix: string;
  readonly buckets: readonly string[];
}

export const bucketColumns = (p: string, n: number) => Array.from({ length: n }, (_, i) => `${p}${i}`);

/** A request row's input tokens, or a tool row's duration. */
export const MAIN: Histogram = { prefix: "", buckets: BUCKETS };

/** A request row's output tokens. */
export const OUT: Histogram = {
  prefix: "out_",
  buckets: bucketColumns("o", GENAI_TOKEN_BOUNDARIES.length + 1),
};

/** A request row's operation duration. */
export const DUR: Histogram = {
  prefix: "dur_",
  buckets: bucketColumns("d", GENAI_DURATION_BOUNDARIES.length + 1),
};

export const TOTALS = ["count", "sum", "min", "max", "first_ms", "updated_ms", "last_event_ms"] as const;

export const histogramColumns = (h: Histogram, buckets = h.buckets.length): string[] => [
  ...TOTALS.map((c) => `${h.prefix}${c}`),
  ...h.buckets.slice(0, buckets),
];

/** Input tokens use the first token buckets of MAIN's columns (b0..b14). */
export const TOKEN_BUCKETS = GENAI_TOKEN_BOUNDARIES.length + 1;
