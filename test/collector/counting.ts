import type { Adapter } from "../../src/adapter/types.ts";

/**
 * An adapter counting its discoveries and the sources it was asked to look at (collectIncremental);
 * without `unchangedNow`, so every source a pass looks at is counted.
 */
export function countingAdapter(inner: Adapter) {
  const n = { discovers: 0, looked: [] as string[] };
  const { unchangedNow: _skipped, ...rest } = inner;
  const adapter: Adapter = {
    ...rest,
    discover: () => {
      n.discovers++;
      return inner.discover();
    },
    collectIncremental: (s, cp) => {
      n.looked.push(s.path);
      return inner.collectIncremental(s, cp);
    },
  };
  return { adapter, n };
}
