import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { compareDebianVersions } from './version';

const sign = (n: number) => Math.sign(n) || 0;

describe('compareDebianVersions (dpkg verrevcmp on the upstream version)', () => {
  // each list is strictly ascending
  const chains: Array<{ name: string; ascending: string[] }> = [
    // ~ sorts before the end of the string, digit runs compare numerically (2 < 16, not "16" < "2")
    {
      name: 'pre-releases before the release, numeric runs',
      ascending: ['9.0.0~2', '9.0.0~16', '9.0.0', '9.0.1', '9.1.2'],
    },
    { name: 'an older major is below any pre-release of the next', ascending: ['8.4.1', '9.0.0~16'] },
    { name: 'numeric not lexicographic', ascending: ['9.2', '9.10', '10.0'] },
    { name: '~~ before ~ before end', ascending: ['1.0~~', '1.0~', '1.0'] },
    // at the end of "1.0" the other side has '.', which sorts after the end
    { name: 'a longer version is newer', ascending: ['1.0', '1.0.0', '1.0.1'] },
    // letters sort before non-letters; a letter sorts after the end of the string
    { name: 'letters before other characters', ascending: ['1.0', '1.0a', '1.0z', '1.0+b1', '1.0.1'] },
    { name: 'upper-case before lower-case letters (ASCII)', ascending: ['1.0A', '1.0a'] },
  ];
  for (const { name, ascending } of chains) {
    it(`${name}: ${ascending.join(' < ')}`, () => {
      for (let i = 0; i < ascending.length; i++) {
        for (let j = 0; j < ascending.length; j++) {
          expect(sign(compareDebianVersions(ascending[i]!, ascending[j]!)), `${ascending[i]} vs ${ascending[j]}`).toBe(
            sign(i - j),
          );
        }
      }
    });
  }

  const equal: Array<[string, string]> = [
    ['9.0.0', '9.0.0'],
    ['9.0.0~16', '9.0.0~16'],
    ['1.01', '1.1'], // leading zeros do not count
    ['1.000', '1.0'],
    ['', ''],
  ];
  it.each(equal)('%s equals %s', (a, b) => {
    expect(compareDebianVersions(a, b)).toBe(0);
    expect(compareDebianVersions(b, a)).toBe(0);
  });

  const version = fc.string({
    unit: fc.constantFrom('0', '1', '2', '9', '.', '~', '+', '-', 'a', 'b', 'Z'),
    maxLength: 8,
  });
  it('is reflexive and antisymmetric', () => {
    fc.assert(
      fc.property(version, version, (a, b) => {
        expect(compareDebianVersions(a, a)).toBe(0);
        expect(sign(compareDebianVersions(a, b)) + sign(compareDebianVersions(b, a))).toBe(0);
      }),
      { numRuns: 2000 },
    );
  });

  it('is transitive (sorting any list gives a consistent order)', () => {
    fc.assert(
      fc.property(fc.array(version, { maxLength: 12 }), (list) => {
        const sorted = [...list].sort(compareDebianVersions);
        for (let i = 0; i < sorted.length; i++) {
          for (let j = i + 1; j < sorted.length; j++) {
            expect(compareDebianVersions(sorted[i]!, sorted[j]!)).toBeLessThanOrEqual(0);
          }
        }
      }),
      { numRuns: 1000 },
    );
  });
});
