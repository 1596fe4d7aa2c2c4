import { fileURLToPath } from 'node:url';
import { folderImports } from '@poise/test-support/imports';
import { describe, expect, test } from 'vitest';

/** The folders of src/ from the bottom up (README, "Source layout"). */
const LAYERS = ['config', 'cluster', 'balancing', 'runtime', 'cli', 'testing'];

describe('the folders of src/ are layers', () => {
  const graph = folderImports(fileURLToPath(new URL('.', import.meta.url)));

  test('src/ holds these folders and no other', () => {
    expect([...graph.keys()]).toEqual(['.', ...LAYERS].sort());
  });

  test('each folder imports only the folders before it, so nothing but testing/ imports testing/', () => {
    for (const [i, folder] of LAYERS.entries()) {
      const allowed = new Set(['.', ...LAYERS.slice(0, i)]);
      expect(
        graph.get(folder)!.filter((f) => !allowed.has(f)),
        `${folder}/ imports a folder above it`,
      ).toEqual([]);
    }
  });

  test('the modules directly in src/ import no folder but the bin entry (cli.ts → cli/)', () => {
    expect(graph.get('.')).toEqual(['cli']);
  });
});
