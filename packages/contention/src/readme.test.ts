import { readFileSync, rmSync, writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { describe, expect, it, vi } from 'vitest';
import { readmeBlock, testReadmeExample } from '@poise/test-support/readme';
import { fitModel } from './index';
import { CURVES, learnAll, synthetic } from './testing/support';

const README = new URL('../README.md', import.meta.url);

describe('README', () => {
  // The README's example is real code: run the ```ts block under "## Example" and compare what
  // it prints with the ```text block that follows it.
  testReadmeExample(README, new URL('./', import.meta.url));

  // The "## Migration cost" section's block runs too, and prints what the README shows.
  it('the migration cost example runs and prints what the README shows', async () => {
    const match = /## Migration cost\n[\s\S]*?```ts\n([\s\S]*?)```\n+```text\n([\s\S]*?)```/.exec(
      readFileSync(README, 'utf8'),
    );
    expect(match, 'README has a migration cost example and its output').not.toBeNull();
    const file = fileURLToPath(new URL('./readme-migration.tmp.ts', import.meta.url));
    writeFileSync(file, match![1]!);
    const lines: string[] = [];
    const log = vi.spyOn(console, 'log').mockImplementation((...args: unknown[]) => void lines.push(args.join(' ')));
    try {
      await import(/* @vite-ignore */ file);
    } finally {
      log.mockRestore();
      rmSync(file, { force: true });
    }
    expect(`${lines.join('\n')}\n`).toBe(match![2]);
  });

  // The accuracy table is measured here; POISE_UPDATE_README=1 writes it into the README.
  it('the accuracy table is what the synthetic curves give', () => {
    const cases = [
      ['linear', 'cpu', 1.1],
      ['knee', 'cpu', 1.1],
      ['logistic', 'cpu', 1.1],
      ['steep memory', 'mem', 1.0],
    ] as const;
    const rows: string[] = [
      '| curve (range) | noise, outliers | median error (pp) | p90 error (pp) | max error (pp) |',
      '|---|---|---|---|---|',
    ];
    for (const [name, dimension, high] of cases) {
      const curve = CURVES[name === 'steep memory' ? 'steepMemory' : name]!;
      for (const [noise, outliers] of [
        [2, 0.05],
        [3, 0.1],
      ] as const) {
        let median = 0;
        let p90 = 0;
        let max = 0;
        for (let seed = 1; seed <= 10; seed++) {
          const model = fitModel(
            learnAll(
              synthetic('node1', curve, dimension, {
                seed,
                levels: 300,
                roundsPerLevel: 4,
                low: 0,
                high,
                noise,
                outliers,
              }),
            ),
          );
          const errors: number[] = [];
          for (let i = 0; i <= Math.round(high * 100); i++)
            errors.push(Math.abs(model.predict('node1', dimension, i / 100).percent - curve(i / 100)));
          errors.sort((a, b) => a - b);
          median = Math.max(median, errors[errors.length >> 1]!);
          p90 = Math.max(p90, errors[Math.floor(errors.length * 0.9)]!);
          max = Math.max(max, errors[errors.length - 1]!);
        }
        rows.push(
          `| ${name} (0–${Math.round(high * 100)} %) | ${noise} pp, ${outliers * 100} % | ${median.toFixed(2)} | ${p90.toFixed(2)} | ${max.toFixed(2)} |`,
        );
      }
    }
    const table = rows.join('\n');
    expect(readmeBlock(README, 'accuracy-table', table)).toBe(table);
  }, 120_000);
});
