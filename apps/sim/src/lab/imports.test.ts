import { fileURLToPath } from 'node:url';
import { describe, expect, test } from 'vitest';
import { importCycles, moduleImports } from '@poise/test-support/imports';

describe("the lab's modules", () => {
  const dir = fileURLToPath(new URL('.', import.meta.url));

  test('import each other in one direction only', () => {
    expect(importCycles(dir)).toEqual([]);
  });

  test('the summary and the report read the digests’ module, not the comparison', () => {
    for (const m of ['charts', 'markdown', 'report']) expect(moduleImports(dir).get(m)).not.toContain('compare');
    expect(moduleImports(dir).get('markdown')).not.toContain('report');
  });
});
