/** Numbers as the lab's report and summary show them. */

/** A number for reading: integers as they are, others with 3 significant digits at most. */
export function fmt(v: number | null | undefined): string {
  if (v === null || v === undefined) return '—';
  if (Number.isInteger(v)) return String(v);
  const a = Math.abs(v);
  if (a >= 100) return v.toFixed(0);
  if (a >= 10) return v.toFixed(1);
  if (a >= 1) return v.toFixed(2);
  return v.toPrecision(2);
}
