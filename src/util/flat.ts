/**
 * `a + b` as one flat string. V8 keeps a concatenation as a cons string pointing at both parts,
 * flattened in place on first use (a Map key's hash) into a second, flat copy the cons string then
 * points at: 32 bytes more for as long as the result lives. A join builds the flat string at once.
 * For strings held for the daemon's life (a walk's paths, its listings' keys: ~64 bytes a
 * document over 30,000 sessions; docs/performance.md, "One string per path"); a short-lived
 * string needs none of this.
 */
export function flatConcat(a: string, b: string): string {
  return [a, b].join("");
}
