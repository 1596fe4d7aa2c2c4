/**
 * Seeded node noise: a bounded random walk per node and dimension (`node <node> set-noise`),
 * resampled once per round. Deterministic: one generator per simulation (`Prng`, `prng.ts`),
 * seeded from `sim_options.seed`, drawn in node byte order, cpu before mem.
 *
 * The walk (amplitude A ≥ 0, the node's base load b ≥ 0 in the same unit): it starts at 0;
 * each round `x' = x + u·A` with `u` uniform in [−1, 1); a step past an edge is reflected
 * back (`x' = 2·edge − x'`) and then clamped to the range [L, A], where `L = max(−A, −b)`, so the
 * node's load `b + x` never goes negative. A step is at most the amplitude, half the band, so
 * consecutive samples are correlated (the walk crosses the band in a few rounds, about 12
 * rounds to forget where it was) but it is no slow drift: like the point samples of a real
 * node's load, which jitter from round to round around a level.
 */

/**
 * One step of the bounded walk (see the file comment): from `x`, amplitude `amplitude`, base
 * load `base`, with `u` uniform in [−1, 1). Returns the new offset, in [max(−A, −base), A].
 */
export function walkStep(x: number, amplitude: number, base: number, u: number): number {
  if (!(amplitude > 0)) return 0;
  const upper = amplitude;
  const lower = Math.max(-amplitude, -base);
  let next = x + u * amplitude;
  if (next > upper) next = 2 * upper - next;
  if (next < lower) next = 2 * lower - next;
  return Math.min(upper, Math.max(lower, next));
}
