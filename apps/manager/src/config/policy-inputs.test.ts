import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { main } from '../cli/main';
import { captureIo } from '../testing/support';

// Policy keys the daemon's config accepts but that mean nothing: each is named in a warning at start.
async function startLines(policy: string[]) {
  const dir = mkdtempSync(join(tmpdir(), 'poise-policy-inputs-'));
  const config = join(dir, 'poise-manager.yaml');
  writeFileSync(
    config,
    [
      'env: sim',
      'mode: observe',
      'policy:',
      ...policy.map((l) => `  ${l}`),
      'metrics: {enabled: false}',
      `state: {file: ${join(dir, 'state.json')}}`,
    ].join('\n'),
  );
  const c = captureIo();
  await main(['--sim', '--config', config], c.io, {});
  return c.logs
    .map((l) => JSON.parse(l) as { level: string; event: string; msg: string })
    .filter((r) => r.event === 'start' && r.level === 'warn')
    .map((r) => r.msg);
}

describe('policy keys that mean nothing are named at start', () => {
  it('an empty ha-auto-rebalance-objective', async () => {
    expect(await startLines(["ha-auto-rebalance-objective: ''"])).toContain(
      "policy.ha-auto-rebalance-objective: invalid value '' (one of imbalance, contention), falling back to 'imbalance' (the default)",
    );
  }, 60_000);

  it('contention-min-gain while the objective is imbalance', async () => {
    expect(
      await startLines(['ha-auto-rebalance-objective: imbalance', 'ha-auto-rebalance-contention-min-gain: 60']),
    ).toContain(
      "policy.ha-auto-rebalance-contention-min-gain: value 60 has no effect while the objective is 'imbalance' (it applies with ha-auto-rebalance-objective contention)",
    );
    const withContention = await startLines([
      'ha-auto-rebalance-objective: contention',
      'ha-auto-rebalance-contention-min-gain: 60',
    ]);
    expect(withContention.filter((m) => m.includes('contention-min-gain'))).toEqual([]);
  }, 60_000);
});
