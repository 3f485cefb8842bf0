/**
 * Whole numbers as the report shows them, `toLocaleString("en-US")`'s text (`1,234,567`), without
 * Intl: the first Intl formatter of a process costs ~19 ms of ICU start-up (docs/performance.md "The
 * local zone without Intl"), more than the rest of formatting a report. Fractions stay Intl's:
 * it rounds the shortest decimal form (1234.55 -> 1,234.6), which toFixed does not (1234.5).
 */

/** `n` with `,` between groups of three digits (Intl's own text for what is not a safe integer). */
export function groupedInteger(n: number): string {
  if (!Number.isSafeInteger(n) || Object.is(n, -0)) return n.toLocaleString("en-US");
  const digits = String(Math.abs(n));
  let grouped = digits.slice(0, ((digits.length - 1) % 3) + 1);
  for (let i = grouped.length; i < digits.length; i += 3) grouped += `,${digits.slice(i, i + 3)}`;
  return n < 0 ? `-${grouped}` : grouped;
}
