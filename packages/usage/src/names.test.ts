import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { compareNames, sortNames } from './index';

/** The order to match: the UTF-8 encodings compared byte by byte (Perl `cmp` on UTF-8 text). */
const utf8Order = (a: string, b: string) => Math.sign(Buffer.compare(Buffer.from(a, 'utf8'), Buffer.from(b, 'utf8')));

describe('compareNames: byte order of the UTF-8 encodings', () => {
  it.each([
    // digits are bytes, not numbers: '1' (0x31) < '2' (0x32) decides before the length
    ['node10', 'node2', -1],
    ['ct:100', 'fa:100', -1],
    ['fa:100', 'vm:100', -1],
    ['vm:100', 'vm:100', 0],
    // a prefix sorts first
    ['node1', 'node10', -1],
    // upper case (0x41..0x5A) before lower case (0x61..0x7A), never locale order
    ['Node1', 'node1', -1],
    // U+FFFD is EF BF BD in UTF-8, U+1F600 is F0 9F 98 80: the emoji sorts after, although its
    // first UTF-16 code unit (0xD83D) is below 0xFFFD
    ['a\u{fffd}', 'a\u{1f600}', -1],
    ['\u{e000}', '\u{10000}', -1],
    // both above U+FFFF: the surrogates compare as the code points do
    ['\u{1f600}', '\u{1f601}', -1],
  ])('%j against %j is %i (and the reverse its opposite)', (a, b, expected) => {
    expect(compareNames(a, b)).toBe(expected);
    expect(compareNames(b, a)).toBe(-expected || 0);
    expect(utf8Order(a, b)).toBe(expected);
  });

  it('agrees with the UTF-8 byte order on any two strings', () => {
    const text = fc.string({ unit: 'binary', maxLength: 6 });
    fc.assert(
      fc.property(text, text, (a, b) => {
        expect(compareNames(a, b)).toBe(utf8Order(a, b));
      }),
      { numRuns: 5000 },
    );
  });

  it('sortNames returns a sorted copy', () => {
    const names = ['vm:2', 'node10', 'vm:10', 'node2'];
    expect(sortNames(names)).toEqual(['node10', 'node2', 'vm:10', 'vm:2']);
    expect(names).toEqual(['vm:2', 'node10', 'vm:10', 'node2']);
  });
});
