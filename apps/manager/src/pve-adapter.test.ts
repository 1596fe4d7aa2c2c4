import { afterEach, describe, expect, it } from 'vitest';
import { GIB, type PveSetup, pveSetup, unbalanced } from './pve-test-support';

const open: PveSetup[] = [];
async function setup(...args: Parameters<typeof pveSetup>): Promise<PveSetup> {
  const s = await pveSetup(...args);
  open.push(s);
  return s;
}
afterEach(async () => {
  for (const s of open.splice(0)) await s.close();
});

describe('the Proxmox VE adapter against the fake API (HTTPS, pinned)', () => {
  it('balances the cluster in act mode, one motion at a time', async () => {
    const s = await setup({ mode: 'act', policy: { 'ha-auto-rebalance-hold-duration': 1 } });
    await s.daemon.start();
    await s.run(12);
    const rounds = s.rounds();
    expect(rounds.filter((r) => r.outcome === 'error')).toEqual([]);
    expect(s.posts().map((p) => `${p.path} ${p.target}`)).toEqual([
      '/cluster/ha/resources/vm:101/migrate node2',
      '/cluster/ha/resources/vm:102/migrate node3',
    ]);
    expect(s.records().filter((r) => r.event === 'motion').map((r) => r.msg)).toEqual([
      'migrate vm:101 from node1 to node2 succeeded after 20 s',
      'migrate vm:102 from node1 to node3 succeeded after 20 s',
    ]);
    expect(rounds.at(-1)).toMatchObject({ outcome: 'skip', reason: 'below-threshold' });
  });
});
