import { describe, expect, it } from 'vitest';
import { EXIT_CONFIG, EXIT_OK, main } from '../main';
import { writeDrainCase } from '../../testing/drain-case';
import { captureIo } from '../../testing/support';

// Drains on the embedded simulator, in simulated time: the queue keeps up to `--parallel`
// (or the case's max_workers) motions in flight.

interface LogRecord {
  time: string;
  event: string;
  msg: string;
  inFlight?: number;
  result?: string;
}

async function drain(dir: string, extra: string[]) {
  const c = captureIo();
  const code = await main(['drain', 'node1', '--sim', dir, '--execute', ...extra], c.io, {});
  const records = c.logs.map((l) => JSON.parse(l) as LogRecord);
  const started = records.filter((r) => r.event === 'drain' && /^step \d+: migrate/.test(r.msg));
  const done = records.find((r) => r.event === 'drain' && r.result === 'done');
  const seconds = (r: LogRecord) => Date.parse(r.time) / 1000;
  return {
    code,
    records,
    started,
    err: c.err.join('\n'),
    /** Simulated seconds from the first request to the end of the drain. */
    took: done && started.length > 0 ? seconds(done) - seconds(started[0]!) : Number.NaN,
    maxInFlight: Math.max(0, ...started.map((r) => r.inFlight ?? 0)),
  };
}

describe('drain --execute on the simulator: motions in flight', () => {
  const dir = writeDrainCase(3, 60);

  it('a 3-node, 60-guest drain with 4 in flight takes at most a third of the one-at-a-time time', async () => {
    const one = await drain(dir, ['--parallel', '1']);
    const four = await drain(dir, ['--parallel', '4']);
    expect(one.code).toBe(EXIT_OK);
    expect(four.code).toBe(EXIT_OK);
    expect(one.started).toHaveLength(60);
    expect(four.started).toHaveLength(60);
    expect(one.maxInFlight).toBe(1);
    expect(four.maxInFlight).toBe(4);
    // every guest requested once
    expect(new Set(four.started.map((r) => /migrate (vm:\d+)/.exec(r.msg)![1])).size).toBe(60);
    expect(four.took).toBeGreaterThan(0);
    expect(four.took).toBeLessThanOrEqual(one.took / 3);
    // piped: one progress line per motion on stderr
    expect(
      four.err.split('\n').filter((l) => /^drain: \d+\/60 done, \d in flight: done: vm:\d+ node1 → node[23]/.test(l)),
    ).toHaveLength(60);
  }, 60_000);

  it("the case's max_workers is the default; the line says where the number came from", async () => {
    const two = await drain(writeDrainCase(3, 12, 2), []);
    expect(two.code).toBe(EXIT_OK);
    expect(two.maxInFlight).toBe(2);
    expect(two.records.find((r) => r.msg.startsWith('draining node1'))?.msg).toBe(
      "draining node1: 12 motions in 6 steps, up to 2 in flight (the cluster's max_workers)",
    );
    const four = await drain(writeDrainCase(3, 12), []);
    expect(four.maxInFlight).toBe(4);
    expect(four.records.find((r) => r.msg.startsWith('draining node1'))?.msg).toContain('up to 4 in flight (default)');
  }, 60_000);

  it.each([0, 'four'])('a bad max_workers (%j) in the case is named', async (value) => {
    const dir2 = writeDrainCase(3, 3);
    const { writeFileSync } = await import('node:fs');
    writeFileSync(`${dir2}/datacenter.cfg`, JSON.stringify({ crs: { ha: 'dynamic' }, max_workers: value }));
    const c = captureIo();
    const code = await main(['drain', 'node1', '--sim', dir2], c.io, {});
    expect(code).toBe(EXIT_CONFIG);
    expect(c.err.join('\n')).toMatch(/datacenter\.cfg.*max_workers.*expected a whole number/);
  });
});
