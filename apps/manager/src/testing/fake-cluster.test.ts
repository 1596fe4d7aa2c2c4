import { describe, expect, it } from 'vitest';
import { FakeCluster } from './fake-cluster';
import { PortError } from '../cluster/port';

const spec = (scripts = {}) => ({
  nodes: [{ name: 'node1' }, { name: 'node2' }],
  guests: [{ sid: 'vm:101', node: 'node1' }],
  scripts,
});
const haOf = async (c: FakeCluster) => {
  const g = (await c.readSnapshot()).guests[0]!;
  return `${g.ha!.state}@${g.node}${g.ha!.target ? `>${g.ha!.target}` : ''}`;
};

describe('FakeCluster (the scripted cluster the daemon tests run against)', () => {
  it.each([
    // script, HA state after the request and after each of 3 rounds
    [{}, ['started@node1', 'migrate@node1>node2', 'started@node2', 'started@node2']],
    [{ rounds: 2 }, ['started@node1', 'migrate@node1>node2', 'migrate@node1>node2', 'started@node2']],
    [{ outcome: 'fail' }, ['started@node1', 'migrate@node1>node2', 'started@node1', 'started@node1']],
    [{ outcome: 'error' }, ['started@node1', 'migrate@node1>node2', 'error@node1', 'error@node1']],
    [{ outcome: 'drop' }, ['started@node1', 'started@node1', 'started@node1', 'started@node1']],
  ])('a motion scripted %j is queued, picked up next round, and ends as scripted', async (script, states) => {
    const c = FakeCluster.create(spec({ 'vm:101': script }));
    expect(await c.requestMotion({ sid: 'vm:101', kind: 'migrate', target: 'node2' })).toEqual({
      accepted: true,
      task: undefined,
      comigrated: [],
    });
    const seen = [await haOf(c)];
    for (let i = 0; i < 3; i++) {
      c.step();
      seen.push(await haOf(c));
    }
    expect(seen).toEqual(states);
  });

  it('measures node usage as base load plus the running guests on it', async () => {
    const c = FakeCluster.create({
      nodes: [{ name: 'node1', baseCpu: 1, baseMem: 10 }],
      guests: [
        { sid: 'vm:101', node: 'node1', cpu: 2, mem: 20 },
        { sid: 'vm:102', node: 'node1', running: false },
      ],
    });
    expect((await c.readSnapshot()).nodes[0]).toMatchObject({ cpu: 3, mem: 30 });
  });

  it('scripts refusals, lost requests and read failures', async () => {
    const c = FakeCluster.create(spec({ 'vm:101': [{ reply: 'refuse' }, { reply: 'lost' }] }));
    expect(await c.requestMotion({ sid: 'vm:101', kind: 'migrate', target: 'node2' })).toEqual({
      accepted: false,
      reason: 'scripted refusal (403)',
    });
    await expect(c.requestMotion({ sid: 'vm:101', kind: 'migrate', target: 'node2' })).rejects.toThrow(PortError);
    c.step();
    expect(await haOf(c)).toBe('migrate@node1>node2'); // lost, yet applied
    c.failNextReads('timeout');
    await expect(c.readSnapshot()).rejects.toMatchObject({ kind: 'timeout', endpoint: 'GET /cluster/resources' });
    expect(c.s.requests).toHaveLength(2);
  });

  it('survives a JSON round trip (fixtures persist it across processes)', async () => {
    const c = FakeCluster.create(spec());
    await c.requestMotion({ sid: 'vm:101', kind: 'migrate', target: 'node2' });
    const copy = FakeCluster.fromJSON(JSON.parse(JSON.stringify(c.toJSON())));
    copy.step();
    expect(await haOf(copy)).toBe('migrate@node1>node2');
  });
});
