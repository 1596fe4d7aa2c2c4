import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { ImbalanceAccumulator, ImbalanceError, imbalance, normalizedImbalance, rawCv } from './index';

const MIB = 1024 * 1024;
const GIB = 1024 * MIB;

/** Node load as spec §4.1: (cpu/maxcpu + mem/maxmem) / 2. */
function load(cpu: number, maxcpu: number, mem: number, maxmem: number): number {
  return (cpu / maxcpu + mem / maxmem) / 2;
}

// spec §4.6 fixtures: usage (1.7, 12334 MiB), (15.184, 529 MiB), (5.2, 9381 MiB)
const homogeneous = [
  load(1.7, 16, 12334 * MIB, 64 * GIB),
  load(15.184, 16, 529 * MIB, 64 * GIB),
  load(5.2, 16, 9381 * MIB, 64 * GIB),
];
const heterogeneous = [
  load(1.7, 16, 12334 * MIB, 128 * GIB),
  load(15.184, 32, 529 * MIB, 96 * GIB),
  load(5.2, 24, 9381 * MIB, 64 * GIB),
];

describe('rawCv and normalizedImbalance', () => {
  it.each([
    // name, loads, raw, normalised
    ['homogeneous fixture (spec §4.6)', homogeneous, 0.4893954724628247, 0.3460548572604576],
    ['heterogeneous fixture (spec §4.6)', heterogeneous, 0.33026013056867354, 0.23352917788066363],
    // all load on one of 3 nodes: mean 1/3, sd = sqrt((4/9 + 1/9 + 1/9)/3) = sqrt(2)/3 → cv sqrt(2)
    ['all on one of three', [1, 0, 0], Math.SQRT2, 1],
    // two nodes 0.25 / 0.75: mean 0.5, sd 0.25 → cv 0.5, /sqrt(1) = 0.5
    ['two nodes', [0.25, 0.75], 0.5, 0.5],
    // 0.5 is exact in binary: sum 1.5, mean 0.5, every difference 0
    ['identical nodes', [0.5, 0.5, 0.5], 0, 0],
    ['empty cluster', [], 0, 0],
    ['one node', [0.7], 0, 0],
    ['zero load sum', [0, 0, 0], 0, 0],
  ])('%s', (_name, loads, raw, normalized) => {
    expect(rawCv(loads)).toBe(raw);
    expect(normalizedImbalance(loads)).toBe(normalized);
    expect(imbalance(loads, 'raw')).toBe(raw);
    expect(imbalance(loads, 'normalized')).toBe(normalized);
  });

  it('is invariant under scaling by a power of two', () => {
    fc.assert(
      fc.property(
        fc.array(
          fc.integer({ min: 0, max: 4000 }).map((x) => x / 997),
          { minLength: 2, maxLength: 20 },
        ),
        (loads) => {
          expect(rawCv(loads.map((l) => l * 2))).toBe(rawCv(loads));
        },
      ),
    );
  });

  it('normalised value stays in [0, 1] for non-negative loads', () => {
    fc.assert(
      fc.property(
        fc.array(
          fc.integer({ min: 0, max: 4000 }).map((x) => x / 997),
          { minLength: 0, maxLength: 30 },
        ),
        (loads) => {
          const v = normalizedImbalance(loads);
          expect(v).toBeGreaterThanOrEqual(0);
          expect(v).toBeLessThanOrEqual(1 + 1e-12);
        },
      ),
    );
  });
});

describe('ImbalanceAccumulator', () => {
  it('answers a move exactly like the direct fold over the modified loads', () => {
    const acc = new ImbalanceAccumulator(homogeneous);
    // move 0.05 of load from node2 (index 1) to node1 (index 0)
    const moved = [homogeneous[0]! + 0.05, homogeneous[1]! - 0.05, homogeneous[2]!];
    expect(acc.imbalanceWithMove(1, 0, 0.05, 'raw')).toBe(rawCv(moved));
    expect(acc.imbalanceWithMove(1, 0, 0.05, 'normalized')).toBe(normalizedImbalance(moved));
    expect(acc.approxImbalanceWithMove(1, 0, 0.05, 'raw')).toBeCloseTo(rawCv(moved), 12);
  });

  it('bounds always contain the exact fold (random loads and moves)', () => {
    const out = new Float64Array(3);
    fc.assert(
      fc.property(
        fc.array(fc.double({ min: 0, max: 3, noNaN: true }), { minLength: 2, maxLength: 40 }),
        fc.nat(),
        fc.nat(),
        fc.double({ min: 0, max: 3, noNaN: true }),
        fc.double({ min: 0, max: 3, noNaN: true }),
        fc.constantFrom<'raw' | 'normalized'>('raw', 'normalized'),
        (loads, a, b, la, lb, metric) => {
          const acc = new ImbalanceAccumulator(loads);
          const i = a % loads.length;
          let j = b % loads.length;
          if (j === i) j = -1;
          acc.boundsWithReplaced(i, la, j, lb, metric, out);
          const exact = acc.imbalanceWithReplaced(i, la, j, lb, metric);
          // subnormal loads (e.g. [5e-324, 0]): the fold takes its scaled path and the
          // accumulator folds exactly instead of bounding; never NaN
          expect(Number.isFinite(exact)).toBe(true);
          expect(out[0]).toBeLessThanOrEqual(exact);
          expect(out[1]).toBeGreaterThanOrEqual(exact);
        },
      ),
      { numRuns: 2000 },
    );
  });

  it('bounds contain the exact fold when squared deviations underflow (tiny loads)', () => {
    // fast-check counterexample: loads [3.1e-162, 0] square to subnormals, the exact fold's CV is √2
    const out = new Float64Array(3);
    const acc = new ImbalanceAccumulator([0, 0]);
    acc.boundsWithReplaced(1, 0, 0, 3.1434555694052576e-162, 'raw', out);
    const exact = acc.imbalanceWithReplaced(1, 0, 0, 3.1434555694052576e-162, 'raw');
    expect(out[0]).toBeLessThanOrEqual(exact);
    expect(out[1]).toBeGreaterThanOrEqual(exact);
  });

  it('bounds contain the exact fold on symmetric, near-balanced loads', () => {
    const out = new Float64Array(3);
    const loads = Array.from({ length: 64 }, () => 0.1 + 0.2);
    const acc = new ImbalanceAccumulator(loads);
    for (let i = 0; i < 64; i += 7) {
      for (let j = 0; j < 64; j += 5) {
        if (i === j) continue;
        acc.boundsWithReplaced(i, loads[i]! - 1e-17, j, loads[j]! + 1e-17, 'raw', out);
        const exact = acc.imbalanceWithReplaced(i, loads[i]! - 1e-17, j, loads[j]! + 1e-17, 'raw');
        expect(out[0]).toBeLessThanOrEqual(exact);
        expect(out[1]).toBeGreaterThanOrEqual(exact);
      }
    }
  });

  it('setLoad keeps bounds valid and matches a fresh accumulator', () => {
    const out = new Float64Array(3);
    const acc = new ImbalanceAccumulator([0.2, 0.4, 0.9, 0.1]);
    acc.setLoad(2, 0.3);
    acc.setLoad(0, 0.7);
    const loads = [0.7, 0.4, 0.3, 0.1];
    expect(acc.imbalance('raw')).toBe(rawCv(loads));
    acc.boundsWithReplaced(1, 0.1, 3, 0.4, 'raw', out);
    const exact = rawCv([0.7, 0.1, 0.3, 0.4]);
    expect(out[0]).toBeLessThanOrEqual(exact);
    expect(out[1]).toBeGreaterThanOrEqual(exact);
  });

  it.each([
    ['negative load', () => new ImbalanceAccumulator([0.1, -1]), 'invalid-load'],
    ['NaN load', () => new ImbalanceAccumulator([Number.NaN]), 'invalid-load'],
    ['index out of range', () => new ImbalanceAccumulator([0.1, 0.2]).load(2), 'index-out-of-range'],
  ])('throws on %s', (_name, fn, code) => {
    try {
      fn();
      expect.unreachable();
    } catch (error) {
      expect(error).toBeInstanceOf(ImbalanceError);
      expect((error as ImbalanceError).code).toBe(code);
      expect((error as ImbalanceError).name).toBe('ImbalanceError');
    }
  });
});

describe('README example', () => {
  it('gives the values the README states', () => {
    expect(rawCv([1, 0, 0])).toBe(1.4142135623730951);
    expect(rawCv([1e300, 0, 0])).toBe(1.414213562373095);
    const acc = new ImbalanceAccumulator([0.2, 0.6, 0.4]);
    expect(acc.imbalanceWithMove(1, 0, 0.2, 'normalized')).toBeCloseTo(0, 15);
    const out = new Float64Array(3);
    acc.boundsWithReplaced(1, 0.4, 0, 0.4, 'raw', out);
    expect(out[0]).toBeLessThanOrEqual(acc.imbalanceWithReplaced(1, 0.4, 0, 0.4, 'raw'));
    expect(out[1]).toBeGreaterThanOrEqual(acc.imbalanceWithReplaced(1, 0.4, 0, 0.4, 'raw'));
  });
});
