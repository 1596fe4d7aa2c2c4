import { defineConfig } from 'vitest/config';

// Tests run against the TypeScript sources: every package exports its
// `src/index.ts` under the `poise-source` condition, so no build is needed.
// POISE_VITEST_JSON=<file> adds a JSON report (used by .ci/run to count results).
const jsonReport = process.env.POISE_VITEST_JSON;

export default defineConfig({
  resolve: { conditions: ['poise-source'] },
  ssr: { resolve: { conditions: ['poise-source'] } },
  test: {
    include: ['packages/*/src/**/*.test.ts', 'apps/*/src/**/*.test.ts', 'tools/**/*.test.ts', 'bench/**/*.test.ts'],
    testTimeout: 120_000,
    reporters: jsonReport ? ['default', 'json'] : ['default'],
    outputFile: jsonReport ? { json: jsonReport } : undefined,
  },
});
