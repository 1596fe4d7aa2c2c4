/**
 * The seeded generator of the simulator and the policy lab: xoshiro128** (Blackman & Vigna,
 * 2018), its four state words seeded through SplitMix32. Deterministic; never Math.random. Not
 * for cryptography.
 *
 * - `new Prng(seed)`: the stream the simulator draws from (the node noise; the load pressure
 *   model's report noise with its own seed), SplitMix32 started at `seed`;
 * - `Prng.forStream(seed, label)`: one of the lab's independent streams of a seed ("sizes",
 *   "events", ...), SplitMix32 started at a mix of `seed` and `hash32(label)`, so that one
 *   stream drawing more does not shift another.
 */
export class Prng {
  private s0: number;
  private s1: number;
  private s2: number;
  private s3: number;

  /** `seed`: the SplitMix32 start, an integer 0..2^32−1. */
  constructor(seed: number) {
    let x = seed >>> 0;
    const splitmix = () => {
      x = (x + 0x9e3779b9) >>> 0;
      let z = x;
      z = Math.imul(z ^ (z >>> 16), 0x85ebca6b) >>> 0;
      z = Math.imul(z ^ (z >>> 13), 0xc2b2ae35) >>> 0;
      return (z ^ (z >>> 16)) >>> 0;
    };
    this.s0 = splitmix();
    this.s1 = splitmix();
    this.s2 = splitmix();
    this.s3 = splitmix();
    // never taken (SplitMix32's output function is a bijection: four successive states cannot
    // all give 0), but the all-zero state is xoshiro's one fixed point
    if ((this.s0 | this.s1 | this.s2 | this.s3) === 0) this.s0 = 1;
  }

  /** The stream `label` of `seed` (a number, up to 2^53; see the file comment). */
  static forStream(seed: number, label: string): Prng {
    return new Prng(hash32(label) ^ Math.imul(seed >>> 0, 0x9e3779b9) ^ Math.floor(seed / 2 ** 32));
  }

  /** @internal A generator in a given state (for checking against the reference implementation). */
  static fromState(s0: number, s1: number, s2: number, s3: number): Prng {
    const p = new Prng(0);
    p.s0 = s0 >>> 0;
    p.s1 = s1 >>> 0;
    p.s2 = s2 >>> 0;
    p.s3 = s3 >>> 0;
    return p;
  }

  /** The next 32-bit unsigned integer. */
  nextUint32(): number {
    const result = Math.imul(rotl(Math.imul(this.s1, 5) >>> 0, 7), 9) >>> 0;
    const t = (this.s1 << 9) >>> 0;
    this.s2 ^= this.s0;
    this.s3 ^= this.s1;
    this.s1 ^= this.s2;
    this.s0 ^= this.s3;
    this.s2 ^= t;
    this.s3 = rotl(this.s3 >>> 0, 11);
    this.s0 >>>= 0;
    this.s1 >>>= 0;
    this.s2 >>>= 0;
    return result;
  }

  /** Uniform in [−1, 1) (32 random bits). */
  nextSigned(): number {
    return this.nextUint32() / 2 ** 31 - 1;
  }

  /** Uniform in [0, 1), 53 random bits. */
  float(): number {
    const hi = this.nextUint32() >>> 5; // 27 bits
    const lo = this.nextUint32() >>> 6; // 26 bits
    return (hi * 67108864 + lo) / 9007199254740992;
  }

  /** Uniform integer in [0, n), n ≥ 1 (rejection sampling, no modulo bias). */
  int(n: number): number {
    if (!Number.isInteger(n) || n < 1 || n > 2 ** 32) throw new RangeError(`Prng.int: bad bound ${n}`);
    const limit = 2 ** 32 - (2 ** 32 % n);
    for (;;) {
      const v = this.nextUint32();
      if (v < limit) return v % n;
    }
  }

  /** Uniform in [a, b). */
  uniform(a: number, b: number): number {
    return a + (b - a) * this.float();
  }

  /** Standard normal (Box–Muller, one of the pair). */
  normal(): number {
    let u = this.float();
    while (u === 0) u = this.float();
    const v = this.float();
    return Math.sqrt(-2 * Math.log(u)) * Math.cos(2 * Math.PI * v);
  }

  /** Log-normal with the given median and shape σ (of the underlying normal). */
  logNormal(median: number, sigma: number): number {
    return median * Math.exp(sigma * this.normal());
  }

  /** Fisher–Yates shuffle of a copy. */
  shuffled<T>(xs: readonly T[]): T[] {
    const a = [...xs];
    for (let i = a.length - 1; i > 0; i--) {
      const j = this.int(i + 1);
      [a[i], a[j]] = [a[j]!, a[i]!];
    }
    return a;
  }
}

function rotl(x: number, k: number): number {
  return ((x << k) | (x >>> (32 - k))) >>> 0;
}

/** FNV-1a over the UTF-16 code units of a string (the label hash of {@link Prng.forStream}). */
export function hash32(s: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < s.length; i++) {
    h ^= s.charCodeAt(i);
    h = Math.imul(h, 0x01000193) >>> 0;
  }
  return h >>> 0;
}
