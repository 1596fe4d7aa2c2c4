/**
 * Conformance with the reference's rules_cfgs: every `<name>.cfg` must produce exactly the
 * bytes of `<name>.cfg.expect`. The upstream folder comes from POISE_UPSTREAM_TESTS (default
 * `<repo root>/../shared/upstream-tests`); without it the suite is skipped, or fails on CI.
 * poise's own cases in `fixtures/rules_cfgs` always run.
 */
import { existsSync, readFileSync, readdirSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, test } from 'vitest';

import { rulesCheckReport } from './index';

const repoRoot = resolve(dirname(fileURLToPath(import.meta.url)), '../../..');
const upstream = process.env.POISE_UPSTREAM_TESTS ?? join(repoRoot, '..', 'shared', 'upstream-tests');
const rulesDir = join(upstream, 'rules_cfgs');
const available = existsSync(rulesDir);
const cases = available
  ? readdirSync(rulesDir)
      .filter((name) => name.endsWith('.cfg') && existsSync(join(rulesDir, `${name}.expect`)))
      .sort()
  : [];

describe('rules_cfgs conformance', () => {
  test('the upstream rules_cfgs folder is present on CI', () => {
    if (process.env.CI === 'true') expect(available, `missing ${rulesDir}`).toBe(true);
  });

  test.skipIf(!available)('the upstream folder has cases', () => {
    expect(cases.length).toBeGreaterThan(0);
  });

  test.skipIf(!available).each(cases)('%s reproduces its .expect byte for byte', (name) => {
    const text = readFileSync(join(rulesDir, name), 'utf8');
    const expected = readFileSync(join(rulesDir, `${name}.expect`), 'utf8');
    expect(rulesCheckReport(text, ['node1', 'node2', 'node3'])).toBe(expected);
  });
});

const fixturesDir = resolve(dirname(fileURLToPath(import.meta.url)), '../fixtures/rules_cfgs');
const fixtures = readdirSync(fixturesDir)
  .filter((name) => name.endsWith('.cfg'))
  .sort();

describe('poise rules_cfgs fixtures', () => {
  test('there are fixtures, each with its .expect', () => {
    expect(fixtures.length).toBeGreaterThan(0);
    for (const name of fixtures) expect(existsSync(join(fixturesDir, `${name}.expect`)), name).toBe(true);
  });

  test.each(fixtures)('%s reproduces its .expect byte for byte', (name) => {
    const text = readFileSync(join(fixturesDir, name), 'utf8');
    const expected = readFileSync(join(fixturesDir, `${name}.expect`), 'utf8');
    expect(rulesCheckReport(text)).toBe(expected);
  });
});
