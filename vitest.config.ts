import { availableParallelism } from 'node:os';
import { configDefaults, defineConfig } from 'vitest/config';

// Tests run against the TypeScript sources: every package exports its
// `src/index.ts` under the `poise-source` condition, so no build is needed.
//
// Two tiers, one suite (CONTRIBUTING.md, "Tests"):
// - `fast` (`pnpm test`): every test file but the slow ones, in two minutes on two cores. Files
//   share their worker's module cache (`isolate: false`): importing the packages once per
//   worker instead of once per file saves about a third of the tier's time. A test must not
//   leave global state behind (no `vi.mock`, `vi.stubEnv`, `process.env` writes or timers left
//   running), which holds today and is what this setting relies on.
// - `slow` (`pnpm test:slow`): files named `*.slow.test.ts` (over ~10 s: exact-oracle sweeps at
//   full size, packaging, real-clock child processes, long simulator runs) and
//   `*.browser.test.ts` (headless Chromium). Isolated, as they start processes and browsers.
// `pnpm test:all` (and CI) runs both.
//
// Workers: one per core. Vitest's default is one fewer than the cores, which is one worker on
// a two-core machine.
//
// POISE_VITEST_JSON=<file> adds a JSON report (used by .ci/run to count results).
const jsonReport = process.env.POISE_VITEST_JSON;

const ROOTS = ['packages/*/src', 'apps/*/src', 'tools', 'bench'];
const SLOW_SUFFIXES = ['.slow.test.ts', '.browser.test.ts'];
const testFiles = (suffixes: string[]) => ROOTS.flatMap((root) => suffixes.map((s) => `${root}/**/*${s}`));

export default defineConfig({
  resolve: { conditions: ['poise-source'] },
  ssr: { resolve: { conditions: ['poise-source'] } },
  test: {
    testTimeout: 120_000,
    maxWorkers: availableParallelism(),
    reporters: jsonReport ? ['default', 'json'] : ['default'],
    outputFile: jsonReport ? { json: jsonReport } : undefined,
    projects: [
      {
        extends: true,
        test: {
          name: 'fast',
          include: testFiles(['.test.ts']),
          exclude: [...configDefaults.exclude, ...SLOW_SUFFIXES.map((s) => `**/*${s}`)],
          isolate: false,
        },
      },
      {
        extends: true,
        test: { name: 'slow', include: testFiles(SLOW_SUFFIXES) },
      },
    ],
  },
});
