// The scenario table in the policy READMEs, recomputed: every scenario under every column (77
// runs, a simulated day among them), so it belongs to the slow tier. The table's columns and the
// command's arguments are checked in scenario-table.test.ts.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, test } from 'vitest';
import type { RunSummary } from '@poise/sim';
import { REPO_ROOT } from './testing/upstream';
import { TABLE_READMES, TABLE_SCENARIOS, renderTables, replaceTable, runTable, tableVariants } from './scenario-table';

describe('the scenario table of the policy READMEs', () => {
  const columns = tableVariants();

  test('the READMEs hold what `pnpm scenario-table` computes now (run it with --write when this fails); a terminal sees the runs counted', () => {
    const drawn: string[] = [];
    const results: Map<string, Map<string, RunSummary>> = runTable(TABLE_SCENARIOS, columns, {
      progress: { isTTY: true, columns: 80, write: (c) => drawn.push(c) },
    });
    const table = renderTables(results, columns);
    const total = TABLE_SCENARIOS.length * columns.length;
    // one bar per run (and the empty one first), then cleared
    expect(drawn).toHaveLength(total + 2);
    expect(drawn[0]).toMatch(new RegExp(`^\\r\\[-+\\]  0/${total} runs   0 %$`));
    expect(drawn[total]).toMatch(new RegExp(`^\\r\\[#+\\] ${total}/${total} runs 100 %$`));
    expect(drawn[total + 1]).toMatch(/^\r +\r$/);
    for (const file of TABLE_READMES) {
      const readme = readFileSync(join(REPO_ROOT, file), 'utf8');
      expect(replaceTable(readme, table), `${file} is stale`).toBe(readme);
    }
  }, 900_000);
});
