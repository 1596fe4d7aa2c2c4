import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { main } from '../cli/main';
import { captureIo } from '../testing/support';

// Policy keys the daemon's config accepts but that mean nothing: each is named in a warning at start.
// A bad value is no such key: it is refused at load, naming the file, the key and the value.
function configWith(policy: string[]) {
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
  return config;
}

async function startLines(policy: string[]) {
  const c = captureIo();
  await main(['--sim', '--config', configWith(policy)], c.io, {});
  return c.logs
    .map((l) => JSON.parse(l) as { level: string; event: string; msg: string })
    .filter((r) => r.event === 'start' && r.level === 'warn')
    .map((r) => r.msg);
}

describe('policy keys that mean nothing are named at start', () => {
  it('an empty ha-auto-rebalance-objective is refused at load (no fallback to the default)', async () => {
    const config = configWith(["ha-auto-rebalance-objective: ''"]);
    for (const argv of [
      ['--sim', '--config', config],
      ['--sim', '--config', config, '--check-config'],
    ]) {
      const c = captureIo();
      expect(await main(argv, c.io, {})).toBe(78);
      expect(c.err.join('\n')).toContain(
        `${config}: policy.ha-auto-rebalance-objective: invalid value '' (one of imbalance, contention)`,
      );
      expect(c.logs).toEqual([]);
    }
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
