/**
 * mulberry32 (Tommy Ettinger, public domain): a small seeded generator of uniform numbers in
 * [0, 1), so every random test case and benchmark workload is reproducible. Shared by the tests
 * and benchmarks of several packages (`@poise/test-support/prng`; bundled into the build of
 * `@poise/plan/testing`, never into a production entry). Not for cryptography, and not the
 * simulator's noise (that is xoshiro128** in @poise/sim).
 */
export function mulberry32(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}
