/**
 * Every benchmark figure in a README is generated: each region named in `README_REGIONS` exists
 * once, between its markers, and is exactly what the renderer makes of `bench/results.json` — the
 * last `pnpm bench --json` run, saved by `pnpm bench:readme` — which must have the current schema.
 * Nothing is timed here.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { BENCH_SCHEMA, README_REGIONS, readRegion, renderRegion, validateBenchResult, writeRegion } from './schema';

const ROOT = join(import.meta.dirname, '..');
const results = () => validateBenchResult(JSON.parse(readFileSync(join(ROOT, 'bench', 'results.json'), 'utf8')));

describe('README benchmark tables', () => {
  it('bench/results.json has the current schema', () => {
    expect(results().schema).toBe(BENCH_SCHEMA);
  });

  for (const { file, region } of README_REGIONS) {
    it(`${file} region '${region}' is generated from bench/results.json`, () => {
      const text = readFileSync(join(ROOT, file), 'utf8');
      expect(readRegion(text, region, file)).toBe(`\n${renderRegion(region, results())}\n`);
    });
  }

  it('refuses a result of another shape, naming the field', () => {
    const r = JSON.parse(readFileSync(join(ROOT, 'bench', 'results.json'), 'utf8'));
    expect(() => validateBenchResult({ ...r, schema: 'poise-bench/1' })).toThrow(
      /\$\.schema: expected 'poise-bench\/4'/,
    );
    const { speedup: _, ...row } = r.startPlacement[0];
    expect(() => validateBenchResult({ ...r, startPlacement: [row] })).toThrow(
      /\$\.startPlacement\[0\]\.speedup: expected a finite number/,
    );
    expect(() => validateBenchResult({ ...r, extra: 1 })).toThrow(/\$\.extra: expected no such field/);
  });

  it('finds a missing or doubled marker', () => {
    expect(() => readRegion('text', 'x', 'F.md')).toThrow(
      /F\.md: markers '<!-- bench:x -->' and '<!-- \/bench:x -->' not found/,
    );
    expect(() => readRegion('<!-- bench:x --><!-- /bench:x --><!-- bench:x -->', 'x', 'F.md')).toThrow(
      /more than once/,
    );
    expect(writeRegion('a <!-- bench:x -->old<!-- /bench:x --> b', 'x', 'F.md', 'new')).toBe(
      'a <!-- bench:x -->\nnew\n<!-- /bench:x --> b',
    );
  });
});
