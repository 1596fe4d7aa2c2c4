import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, test } from 'vitest';
import type { RunSummary } from '@poise/sim';
import { REPO_ROOT } from './upstream';
import {
  TABLE_READMES,
  TABLE_SCENARIOS,
  renderTables,
  replaceTable,
  runScenario,
  tableVariants,
} from './scenario-table';

describe('the scenario table of the policy READMEs', () => {
  const columns = tableVariants();

  test('has a column for defaults, each key whose recommended value is not its default, and the preset', () => {
    expect(columns.map((c) => c.name)).toEqual([
      'defaults',
      'backoff 60',
      'cooldown 600',
      'min-improvement 5',
      'smoothing 300',
      'cost-weight 0.2',
      'memhost 1',
      'min-pressure-cpu 10',
      'min-pressure-mem 5',
      'check-migratable 1',
      'recommended',
    ]);
  });

  test('the READMEs hold what `pnpm scenario-table` computes now (run it with --write when this fails)', () => {
    const results = new Map<string, Map<string, RunSummary>>();
    for (const { name } of TABLE_SCENARIOS) {
      results.set(name, new Map(columns.map((c) => [c.name, runScenario(name, c.sets).summary])));
    }
    const table = renderTables(results, columns);
    for (const file of TABLE_READMES) {
      const readme = readFileSync(join(REPO_ROOT, file), 'utf8');
      expect(replaceTable(readme, table), `${file} is stale`).toBe(readme);
    }
  });
});
