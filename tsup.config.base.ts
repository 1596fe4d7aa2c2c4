import { defineConfig, type Options } from 'tsup';

/** The one build configuration every package and app shares: ESM + `.d.ts`. */
export function poiseTsup(entry: string[] = ['src/index.ts'], extra: Options = {}) {
  return defineConfig({
    entry,
    format: ['esm'],
    dts: true,
    sourcemap: true,
    clean: true,
    target: 'node20',
    ...extra,
  });
}
