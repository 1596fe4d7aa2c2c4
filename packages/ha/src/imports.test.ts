import { fileURLToPath } from 'node:url';
import { describe, expect, test } from 'vitest';
import { importCycles, moduleImports } from '@poise/test-support/imports';

describe("the HA core's modules", () => {
  const dir = fileURLToPath(new URL('.', import.meta.url));

  test('import each other in one direction only (utilities below the modules that use them)', () => {
    expect(importCycles(dir)).toEqual([]);
  });

  test('the balancer reads the manager through its own view, not the manager module', () => {
    expect(moduleImports(dir).get('balance')).not.toContain('manager');
    expect(moduleImports(dir).get('usage-model')).not.toContain('crm');
  });
});
