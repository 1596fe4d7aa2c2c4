/**
 * A generated case simulated for the day-identity tests (`day-identity.test.ts`, fast, and
 * `day-identity.slow.test.ts`): the case `params` (under apps/sim/lab/corpus) generated with
 * seed 1 into `root/<name>`, run by the HA core under the `pve-9.2` profile and by
 * `poise-sim summary`; the whole log as its sha256 and the summary line.
 */
import { createHash } from 'node:crypto';
import { join, resolve } from 'node:path';
import { Simulation, loadCase } from '@poise/sim';
import { expect } from 'vitest';
import { main } from '../main';
import { REPO_ROOT } from './upstream';

const io = (out: string[]) => ({
  out: (l: string) => out.push(l),
  err: (l: string) => out.push(`stderr: ${l}`),
  write: () => {},
});

export async function simulatedDay(
  root: string,
  name: string,
  params: string,
  extra: readonly string[],
): Promise<{ log: string; summary: string }> {
  const dir = join(root, name);
  const generated: string[] = [];
  const yaml = resolve(REPO_ROOT, 'apps/sim/lab/corpus', params);
  expect(await main(['generate', yaml, '--out', dir, '--seed', '1', ...extra], io(generated))).toBe(0);
  const res = new Simulation(loadCase(dir), { profile: 'pve-9.2' }).run();
  expect(res.error).toBeUndefined();
  const summary: string[] = [];
  expect(await main(['summary', dir], io(summary))).toBe(0);
  expect(summary).toHaveLength(1);
  return { log: createHash('sha256').update(res.log).digest('hex'), summary: summary[0]! };
}
