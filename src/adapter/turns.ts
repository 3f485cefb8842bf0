/**
 * The user turns of one conversation, in order: each prompt opens one, closing the one before;
 * messages before any prompt form the "" turn. Shared by the adapters; the key is each one's own.
 */
import { latestTs } from "./timing.ts";
import type { AgentTurn } from "./types.ts";

export interface TurnOwner {
  readonly sessionId: string;
  readonly rootSessionId: string;
  readonly agent: string;
  readonly project: string;
  readonly path: string;
}

export class TurnBuilder {
  private readonly turns: AgentTurn[] = [];
  private current: { turnId: string; startMs: number; endMs: number } | undefined;

  // Plain fields, not parameter properties: Node's type stripping (the background reader's
  // worker run from the sources, in tests) has none.
  private readonly owner: TurnOwner;
  private readonly key: (turnId: string) => string;

  constructor(owner: TurnOwner, key: (turnId: string) => string) {
    this.owner = owner;
    this.key = key;
  }

  open(turnId: string, ts: number): void {
    this.finish(true);
    this.current = { turnId, startMs: ts, endMs: ts };
  }

  /** A message of the current turn (before any prompt: the "" turn). */
  touch(ts: number): void {
    if (this.current === undefined) this.current = { turnId: "", startMs: ts, endMs: ts };
    if (this.current.startMs === 0) this.current.startMs = ts;
    this.current.endMs = latestTs(this.current.endMs, ts);
  }

  currentId(): string {
    return this.current?.turnId ?? "";
  }

  done(): AgentTurn[] {
    this.finish(false);
    return this.turns;
  }

  private finish(closed: boolean): void {
    const c = this.current;
    if (c === undefined) return;
    this.current = undefined;
    const o = this.owner;
    this.turns.push({
      turnKey: this.key(c.turnId),
      turnId: c.turnId,
      sessionId: o.sessionId,
      rootSessionId: o.rootSessionId,
      agent: o.agent,
      project: o.project,
      startMs: c.startMs,
      endMs: c.endMs,
      closed,
      sourcePath: o.path,
    });
  }
}
