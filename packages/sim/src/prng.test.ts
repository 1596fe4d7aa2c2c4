import { describe, expect, it } from 'vitest';
import { Prng, hash32 } from './index';

describe('Prng', () => {
  it('is xoshiro128**: the reference C implementation from state {1, 2, 3, 4}', () => {
    const p = Prng.fromState(1, 2, 3, 4);
    // printed by the authors' xoshiro128starstar.c with s = {1, 2, 3, 4}
    expect(Array.from({ length: 8 }, () => p.nextUint32())).toEqual([
      11520, 0, 5927040, 70819200, 2031721883, 1637235492, 1287239034, 3734860849,
    ]);
  });
  it('new Prng(seed) is SplitMix32-seeded from the seed itself (the node noise of seed 0)', () => {
    // SplitMix32 from 0 gives the state words; the first output follows from the second word
    const seeded = new Prng(0);
    let x = 0;
    const splitmix = () => {
      x = (x + 0x9e3779b9) >>> 0;
      let z = x;
      z = Math.imul(z ^ (z >>> 16), 0x85ebca6b) >>> 0;
      z = Math.imul(z ^ (z >>> 13), 0xc2b2ae35) >>> 0;
      return (z ^ (z >>> 16)) >>> 0;
    };
    const fromState = Prng.fromState(splitmix(), splitmix(), splitmix(), splitmix());
    const xs = Array.from({ length: 8 }, () => seeded.nextUint32());
    expect(xs).toEqual(Array.from({ length: 8 }, () => fromState.nextUint32()));
  });
  it('same seed and label → same stream; another label or seed → another stream', () => {
    const a = Prng.forStream(7, 'sizes');
    const b = Prng.forStream(7, 'sizes');
    const xs = Array.from({ length: 5 }, () => a.float());
    expect(Array.from({ length: 5 }, () => b.float())).toEqual(xs);
    expect(Prng.forStream(7, 'events').float()).not.toBe(xs[0]);
    expect(Prng.forStream(8, 'sizes').float()).not.toBe(xs[0]);
  });
  it('float is in [0, 1) and int(n) in [0, n) without bias over many draws', () => {
    const p = new Prng(1);
    const counts = [0, 0, 0];
    for (let i = 0; i < 30_000; i++) {
      const f = p.float();
      expect(f >= 0 && f < 1).toBe(true);
      counts[p.int(3)]!++;
    }
    // each ≈ 10,000; 4 standard deviations of a binomial(30000, 1/3) ≈ 4 · 82 = 328
    for (const c of counts) expect(Math.abs(c - 10_000)).toBeLessThan(330);
  });
  it('logNormal has the given median', () => {
    const p = new Prng(3);
    const xs = Array.from({ length: 20_001 }, () => p.logNormal(4, 1)).sort((a, b) => a - b);
    expect(xs[10_000]!).toBeGreaterThan(3.8);
    expect(xs[10_000]!).toBeLessThan(4.2);
  });
  it('rejects a bad bound', () => {
    expect(() => new Prng(1).int(0)).toThrow(/bad bound/);
    expect(() => new Prng(1).int(1.5)).toThrow(/bad bound/);
  });
  it('hash32 is FNV-1a', () => {
    expect(hash32('')).toBe(0x811c9dc5);
    expect(hash32('a')).toBe(0xe40c292c);
  });
});
