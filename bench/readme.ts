/**
 * `pnpm bench:readme`: runs `pnpm bench --json` (or reads a saved result with `--from <file>`),
 * checks it against the schema, saves it as `bench/results.json` and rewrites every README region
 * of `README_REGIONS` (between `<!-- bench:<region> -->` and `<!-- /bench:<region> -->`) from it.
 * Extra arguments go to the bench (e.g. `--quick`). `readme.test.ts` holds the READMEs to this.
 */
import { execFileSync } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import process from 'node:process';
import { README_REGIONS, renderRegion, validateBenchResult, writeRegion } from './schema';

const ROOT = join(import.meta.dirname, '..');
export const RESULTS_FILE = join(ROOT, 'bench', 'results.json');

function benchJson(args: readonly string[]): string {
  return execFileSync(
    process.execPath,
    ['--conditions=poise-source', '--expose-gc', '--import', 'tsx', join(ROOT, 'bench', 'run.ts'), '--json', ...args],
    {
      cwd: ROOT,
      encoding: 'utf8',
      stdio: ['ignore', 'pipe', 'inherit'],
      maxBuffer: 64 * 1024 * 1024,
    },
  );
}

function main(): void {
  const args = process.argv.slice(2);
  const fromAt = args.indexOf('--from');
  const text = fromAt === -1 ? benchJson(args) : readFileSync(args[fromAt + 1]!, 'utf8');
  const result = validateBenchResult(JSON.parse(text));
  writeFileSync(RESULTS_FILE, `${JSON.stringify(result, null, 1)}\n`);
  const files = new Map<string, string>();
  for (const { file, region } of README_REGIONS) {
    const path = join(ROOT, file);
    const before = files.get(path) ?? readFileSync(path, 'utf8');
    files.set(path, writeRegion(before, region, file, renderRegion(region, result)));
  }
  for (const [path, content] of files) writeFileSync(path, content);
  process.stderr.write(`wrote ${RESULTS_FILE} and ${[...files.keys()].length} README(s)\n`);
}

main();
