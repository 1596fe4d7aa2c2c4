import { fileURLToPath } from 'node:url';
import { describe, expect, test } from 'vitest';
import { importCycles, moduleImports } from '../../../../tools/test-support/imports';

describe("the daemon's modules, one per concern", () => {
  const dir = fileURLToPath(new URL('.', import.meta.url));

  test('import each other in one direction only', () => {
    expect(importCycles(dir)).toEqual([]);
  });

  test('the round, the motion follower, the lock, the state, reload and the status are separate modules under the loop, none importing it', () => {
    const graph = moduleImports(dir);
    const concerns = ['round', 'follower', 'lock-guard', 'state-keeper', 'reload', 'status'];
    for (const module of concerns) {
      expect(graph.has(module)).toBe(true);
      expect(graph.get(module)).not.toContain('daemon');
    }
    expect(graph.get('daemon')).toEqual(expect.arrayContaining(concerns));
  });
});
