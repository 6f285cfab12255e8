/**
 * Small statistics helpers shared by the orchestrator and the load process.
 * Percentiles use the nearest-rank method on a sorted copy (no interpolation),
 * the same way autocannon's histogram reports them.
 */

/** The `q`-quantile (0..1) of `samples` by nearest rank; NaN when empty. */
export function quantile(samples, q) {
  if (samples.length === 0) return Number.NaN;
  const sorted = Float64Array.from(samples).sort();
  const rank = Math.min(sorted.length - 1, Math.max(0, Math.ceil(q * sorted.length) - 1));
  return sorted[rank];
}

/** p50/p90/p99/mean/max of latency samples in ms. */
export function summarize(samples) {
  if (samples.length === 0) return { count: 0, p50: null, p90: null, p99: null, mean: null, max: null };
  const sorted = Float64Array.from(samples).sort();
  const at = (q) => sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil(q * sorted.length) - 1))];
  let sum = 0;
  for (const v of sorted) sum += v;
  return {
    count: sorted.length,
    p50: at(0.5),
    p90: at(0.9),
    p99: at(0.99),
    mean: sum / sorted.length,
    max: sorted[sorted.length - 1],
  };
}

/** Median of the finite numbers in `values`; null when there are none. */
export function median(values) {
  const finite = values.filter((v) => typeof v === 'number' && Number.isFinite(v));
  if (finite.length === 0) return null;
  const sorted = [...finite].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 1 ? sorted[mid] : (sorted[mid - 1] + sorted[mid]) / 2;
}

/** `a / b` when both are finite and b is non-zero, else null. */
export function ratio(a, b) {
  return typeof a === 'number' && typeof b === 'number' && Number.isFinite(a) && Number.isFinite(b) && b !== 0
    ? a / b
    : null;
}

/** Rounds to `digits` decimals, keeping null/undefined as null. */
export function round(value, digits = 2) {
  if (typeof value !== 'number' || !Number.isFinite(value)) return null;
  const f = 10 ** digits;
  return Math.round(value * f) / f;
}
