/**
 * Active-time gaps one object each, as tests write and read them: `timelines` packs them into the
 * ActiveTimeline records the adapters emit (one per stream, its context from its first gap),
 * `gapsOf` unpacks a parse's timelines.
 */
import type { ActiveTimeGroup, ActiveTimeline, ActiveTimeType } from "../../src/adapter/types.ts";

export interface Gap {
  readonly streamKey: string;
  readonly sessionId: string;
  readonly agent: string;
  readonly type: ActiveTimeType;
  readonly startMs: number;
  readonly durationMs: number;
  readonly model: string;
  readonly provider: string;
  readonly project: string;
  readonly sourcePath: string;
  readonly client?: string;
}

/** The gaps as timelines, one per stream in the order first met, its gaps in the given order. */
export function timelines(gaps: readonly Gap[]): ActiveTimeline[] {
  const byStream = new Map<string, Gap[]>();
  for (const g of gaps) {
    const list = byStream.get(g.streamKey);
    if (list === undefined) byStream.set(g.streamKey, [g]);
    else list.push(g);
  }
  return [...byStream.values()].map((list) => {
    const first = list[0] as Gap;
    const groups: ActiveTimeGroup[] = [];
    const group = list.map((g) => {
      const i = groups.findIndex(
        (x) => x.type === g.type && x.model === g.model && x.provider === g.provider,
      );
      if (i >= 0) return i;
      groups.push({ type: g.type, model: g.model, provider: g.provider });
      return groups.length - 1;
    });
    return {
      streamKey: first.streamKey,
      sessionId: first.sessionId,
      agent: first.agent,
      project: first.project,
      sourcePath: first.sourcePath,
      ...(first.client === undefined ? {} : { client: first.client }),
      groups,
      startMs: Float64Array.from(list, (g) => g.startMs),
      durationMs: Float64Array.from(list, (g) => g.durationMs),
      group: Uint32Array.from(group),
    };
  });
}

/** The timelines' gaps, one object each, in order. */
export function gapsOf(ts: readonly ActiveTimeline[]): Gap[] {
  return ts.flatMap((t) =>
    Array.from(t.startMs, (startMs, i) => {
      const g = t.groups[t.group[i] as number] as ActiveTimeGroup;
      return {
        streamKey: t.streamKey,
        sessionId: t.sessionId,
        agent: t.agent,
        type: g.type,
        startMs,
        durationMs: t.durationMs[i] as number,
        model: g.model,
        provider: g.provider,
        project: t.project,
        sourcePath: t.sourcePath,
        ...(t.client === undefined ? {} : { client: t.client }),
      };
    }),
  );
}
