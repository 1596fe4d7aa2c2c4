/**
 * Rules engine at scale: parse, check + transform, compile and write a generated config of
 * `--blocks` blocks (default 1,000 = 21,000 rules over 32,000 resources, see
 * packages/rules/src/testing/large-config.ts). Prints one table row per step (median of `--reps` warm
 * runs, default 5, after one warm-up run) and the heap and RSS after the last run; `--json`
 * prints the same as JSON. Run: `pnpm bench:rules` (or `pnpm bench:rules --blocks 2000`).
 */
import { performance } from 'node:perf_hooks';
import process from 'node:process';

import {
  cloneRulesConfig,
  compileRules,
  parseRulesConfig,
  transformRules,
  writeRulesConfig,
} from '../packages/rules/src/index';
import {
  LARGE_CONFIG_NODES,
  LARGE_CONFIG_RULES_PER_BLOCK,
  largeRulesConfigText,
} from '../packages/rules/src/testing/large-config';

function option(name: string, fallback: number): number {
  const index = process.argv.indexOf(`--${name}`);
  return index >= 0 ? Number(process.argv[index + 1]) : fallback;
}

const blocks = option('blocks', 1000);
const reps = option('reps', 5);
const text = largeRulesConfigText(blocks);

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[sorted.length >> 1] as number;
}

function time(run: () => void): number[] {
  run(); // warm-up
  const out: number[] = [];
  for (let i = 0; i < reps; i++) {
    const start = performance.now();
    run();
    out.push(performance.now() - start);
  }
  return out;
}

const parsed = parseRulesConfig(text).config;
const transformed = cloneRulesConfig(parsed);
transformRules(transformed, LARGE_CONFIG_NODES);

const rows = [
  { step: 'parse', ms: time(() => parseRulesConfig(text)) },
  {
    step: 'check + transform',
    ms: time(() => transformRules(cloneRulesConfig(parsed), LARGE_CONFIG_NODES)),
  },
  { step: 'compile', ms: time(() => compileRules(transformed, LARGE_CONFIG_NODES)) },
  { step: 'write', ms: time(() => writeRulesConfig(parsed)) },
  {
    step: 'all (parse → compile)',
    ms: time(() => {
      const { config } = parseRulesConfig(text);
      transformRules(config, LARGE_CONFIG_NODES);
      compileRules(config, LARGE_CONFIG_NODES);
    }),
  },
].map(({ step, ms }) => ({
  step,
  medianMs: Math.round(median(ms)),
  minMs: Math.round(Math.min(...ms)),
  maxMs: Math.round(Math.max(...ms)),
}));

const memory = process.memoryUsage();
const summary = {
  rules: blocks * LARGE_CONFIG_RULES_PER_BLOCK,
  resources: blocks * 32,
  textMB: Math.round((text.length / 1e6) * 10) / 10,
  heapUsedMB: Math.round(memory.heapUsed / 2 ** 20),
  rssMB: Math.round(memory.rss / 2 ** 20),
  rows,
};

if (process.argv.includes('--json')) {
  console.log(JSON.stringify(summary));
} else {
  console.log(
    `rules ${summary.rules}, resources ${summary.resources}, text ${summary.textMB} MB, ${LARGE_CONFIG_NODES.length} nodes`,
  );
  console.log('step                    median ms   min–max');
  for (const row of rows)
    console.log(`${row.step.padEnd(24)}${String(row.medianMs).padStart(9)}   ${row.minMs}–${row.maxMs}`);
  console.log(`heap used ${summary.heapUsedMB} MB, rss ${summary.rssMB} MB (after all runs)`);
}
