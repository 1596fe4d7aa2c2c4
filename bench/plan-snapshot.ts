/**
 * Writes a generated cluster (`@poise/plan/testing`) as a plan snapshot file, the JSON that
 * `poise-manager plan --snapshot <file.json>` reads:
 *
 *   pnpm tsx bench/plan-snapshot.ts [--nodes 64] [--guests 5000] [--rules 500] [--seed 1] > cluster.json
 */
import { generatedCluster } from '../packages/plan/src/testing/index';

function flag(name: string, fallback: number): number {
  const i = process.argv.indexOf(name);
  if (i < 0) return fallback;
  const value = Number(process.argv[i + 1]);
  if (!Number.isInteger(value) || value < 0)
    throw new Error(`${name} takes a whole number, got '${process.argv[i + 1]}'`);
  return value;
}

const cluster = generatedCluster(flag('--seed', 1), flag('--nodes', 64), flag('--guests', 5000), flag('--rules', 500));
process.stdout.write(`${JSON.stringify(cluster)}\n`);
