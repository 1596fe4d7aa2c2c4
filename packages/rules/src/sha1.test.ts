import { createHash } from 'node:crypto';

import fc from 'fast-check';
import { expect, test } from 'vitest';

import { sha1Hex } from './sha1';

test.each([
  ['', 'da39a3ee5e6b4b0d3255bfef95601890afd80709'],
  ['abc', 'a9993e364706816aba3e25717850c26c9cd0d89d'],
  // 56 bytes: the length no longer fits the first block
  ['abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq', '84983e441c3bd26ebaae4aa1f95129e5e54670f1'],
])('sha1Hex(%j) is the FIPS 180 test vector', (text, digest) => {
  expect(sha1Hex(text)).toBe(digest);
});

test('sha1Hex equals node:crypto on the UTF-8 bytes of any text', () => {
  fc.assert(
    fc.property(fc.string({ unit: 'binary', maxLength: 300 }), (text) => {
      expect(sha1Hex(text)).toBe(createHash('sha1').update(text, 'utf8').digest('hex'));
    }),
    { numRuns: 500, seed: 13 },
  );
});
