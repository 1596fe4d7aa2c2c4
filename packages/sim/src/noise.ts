/**
 * Seeded node noise: a bounded random walk per node and dimension (`node <node> set-noise`),
 * resampled once per round. Deterministic: one generator per simulation, seeded from
 * `sim_options.seed`, drawn in node byte order, cpu before mem.
 *
 * The walk (amplitude A ≥ 0, the node's base load b ≥ 0 in the same unit): it starts at 0;
 * each round `x' = x + u·A` with `u` uniform in [−1, 1); a step past an edge is reflected
 * back (`x' = 2·edge − x'`) and then clamped to the range [L, A], where `L = max(−A, −b)`, so the
 * node's load `b + x` never goes negative. A step is at most the amplitude, half the band, so
 * consecutive samples are correlated (the walk crosses the band in a few rounds, about 12
 * rounds to forget where it was) but it is no slow drift: like the point samples of a real
 * node's load, which jitter from round to round around a level.
 */

/** xoshiro128** (32-bit state words), seeded through splitmix32: fast, small, well distributed. */
export class Prng {
  private a: number;
  private b: number;
  private c: number;
  private d: number;

  /** `seed`: an integer 0..2^32−1. */
  constructor(seed: number) {
    let s = seed >>> 0;
    const next = (): number => {
      s = (s + 0x9e3779b9) >>> 0;
      let z = s;
      z = Math.imul(z ^ (z >>> 16), 0x85ebca6b) >>> 0;
      z = Math.imul(z ^ (z >>> 13), 0xc2b2ae35) >>> 0;
      return (z ^ (z >>> 16)) >>> 0;
    };
    this.a = next();
    this.b = next();
    this.c = next();
    this.d = next();
  }

  /** The next 32-bit unsigned integer. */
  nextUint32(): number {
    const result = Math.imul(rotl(Math.imul(this.b, 5) >>> 0, 7), 9) >>> 0;
    const t = (this.b << 9) >>> 0;
    this.c ^= this.a;
    this.d ^= this.b;
    this.b ^= this.c;
    this.a ^= this.d;
    this.c ^= t;
    this.d = rotl(this.d, 11);
    return result;
  }

  /** Uniform in [−1, 1). */
  nextSigned(): number {
    return this.nextUint32() / 2 ** 31 - 1;
  }
}

function rotl(x: number, k: number): number {
  return ((x << k) | (x >>> (32 - k))) >>> 0;
}

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
