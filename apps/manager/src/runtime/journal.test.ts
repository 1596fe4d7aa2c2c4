import { describe, expect, it } from 'vitest';
import { motionRecord, node, snapshot, T0 } from '../testing/support';
import {
  DecisionLog,
  HISTORY_CHUNK_ROUNDS,
  HISTORY_MAX_ROUNDS,
  historyCapacity,
  Journal,
  MOTION_LOG_MAX,
  MotionLog,
  type NodeSample,
  RoundHistory,
} from './journal';
import type { RoundReport } from './report';

const sample = (name: string, cpu: number, mem: number, extra: Partial<NodeSample> = {}): NodeSample => ({
  name,
  cpu,
  mem,
  pressureCpu: undefined,
  pressureMem: undefined,
  ...extra,
});

function report(round: number, extra: Partial<RoundReport> = {}): RoundReport {
  return {
    round,
    outcome: 'skip',
    reason: 'below-threshold',
    message: `round ${round}`,
    level: 'info',
    fields: {},
    ...extra,
  };
}

describe('the round history', () => {
  it('keeps a day of rounds, at most a day at 5 s', () => {
    // 86,400 s / 10 s = 8,640 rounds, one more for the round at each end
    expect(historyCapacity(10)).toBe(8641);
    expect(historyCapacity(3600)).toBe(25);
    expect(historyCapacity(1)).toBe(HISTORY_MAX_ROUNDS);
    expect(() => new RoundHistory(0)).toThrow('history capacity must be a whole number ≥ 1, got 0');
  });

  it('gives each round in aligned columns; missing values are null, numbers rounded', () => {
    const h = new RoundHistory(100);
    h.push(1, T0, 'error', undefined, []);
    h.push(2, T0 + 10, 'skip', 0.123456, [
      sample('node2', 0.5, 0.25),
      sample('node1', 1 / 3, 0.1, { pressureCpu: 12.345 }),
    ]);
    h.push(3, T0 + 20, 'move', 0.2, [sample('node1', 0.3, Number.NaN)]);
    expect(h.toJson()).toEqual({
      rounds: [1, 2, 3],
      time: [T0, T0 + 10, T0 + 20],
      outcome: ['error', 'skip', 'move'],
      // float32 storage, 4 decimals out
      imbalance: [null, 0.1235, 0.2],
      nodes: {
        node1: { cpu: [null, 0.3333, 0.3], mem: [null, 0.1, null], pressureCpu: [null, 12.35, null] },
        node2: { cpu: [null, 0.5, null], mem: [null, 0.25, null] },
      },
    });
    expect(h.toJson({ after: 2 }).rounds).toEqual([3]);
    expect(h.toJson({ since: T0 + 10 }).rounds).toEqual([2, 3]);
    // a node that reported nothing in the rounds asked for is not listed
    expect(Object.keys(h.toJson({ after: 2 }).nodes)).toEqual(['node1']);
  });

  it('holds exactly its capacity; whole chunks age out, so its memory stays bounded', () => {
    const capacity = HISTORY_CHUNK_ROUNDS + 10;
    const h = new RoundHistory(capacity);
    for (let r = 1; r <= 5 * HISTORY_CHUNK_ROUNDS; r++) h.push(r, T0 + r, 'skip', 0.5, [sample('node1', 0.5, 0.5)]);
    const json = h.toJson();
    expect(json.rounds).toHaveLength(capacity);
    expect(json.rounds[0]).toBe(5 * HISTORY_CHUNK_ROUNDS - capacity + 1);
    expect(json.rounds.at(-1)).toBe(5 * HISTORY_CHUNK_ROUNDS);
    // the rounds held beyond the capacity are less than a chunk
    expect(h.size).toBeGreaterThanOrEqual(capacity);
    expect(h.size).toBeLessThan(capacity + HISTORY_CHUNK_ROUNDS);
    // a node gone for longer than the history is forgotten
    h.push(5 * HISTORY_CHUNK_ROUNDS + 1, T0, 'skip', 0.5, [sample('node2', 0.1, 0.1)]);
    for (let r = 1; r <= capacity; r++) h.push(6 * HISTORY_CHUNK_ROUNDS + r, T0, 'skip', 0.5, [sample('node2', 0, 0)]);
    expect(Object.keys(h.toJson().nodes)).toEqual(['node2']);
    h.resize(10);
    expect(h.toJson().rounds).toHaveLength(10);
  });
});

describe('the decision log', () => {
  const entry = (round: number, outcome: RoundReport['outcome'], reason: string, message: string) => ({
    round,
    time: T0 + round * 10,
    timeText: '',
    outcome,
    reason,
    level: 'info' as const,
    message,
  });

  it('filters by round, outcome, reason and text, newest last, and keeps its capacity', () => {
    const log = new DecisionLog(4);
    log.add(entry(1, 'skip', 'holding', 'hold round 1/3'));
    log.add(entry(2, 'move', 'move', 'migrate vm:101 from node1 to node2'));
    log.add(entry(3, 'skip', 'motion-in-flight', 'motion in flight: migrate vm:101'));
    log.add(entry(4, 'error', 'api-error', 'reading the cluster failed'));
    log.add(entry(5, 'skip', 'below-threshold', 'below threshold'));
    expect(log.size).toBe(4);
    expect(log.query().map((e) => e.round)).toEqual([2, 3, 4, 5]);
    expect(log.query({ after: 3 }).map((e) => e.round)).toEqual([4, 5]);
    expect(log.query({ outcomes: new Set(['move', 'error']) }).map((e) => e.round)).toEqual([2, 4]);
    expect(log.query({ reasons: new Set(['motion-in-flight']) }).map((e) => e.round)).toEqual([3]);
    expect(log.query({ text: 'VM:101' }).map((e) => e.round)).toEqual([2, 3]);
    expect(log.query({ limit: 1 }).map((e) => e.round)).toEqual([5]);
    expect(log.query({ since: T0 + 40 }).map((e) => e.round)).toEqual([4, 5]);
    for (let r = 6; r < 1000; r++) log.add(entry(r, 'skip', 'holding', ''));
    expect(log.query().map((e) => e.round)).toEqual([996, 997, 998, 999]);
  });
});

describe('the motion log', () => {
  it('follows a motion from its request to its outcome; a refusal or a motion of a previous run gets its own entry', () => {
    const log = new MotionLog();
    log.requested(motionRecord());
    expect(log.list()).toMatchObject([{ sid: 'vm:101', result: 'in-flight', requestedAt: T0, endedAt: undefined }]);
    log.ended(motionRecord(), 'succeeded', undefined, T0 + 40);
    log.ended(
      { sid: 'vm:102', source: 'node1', target: 'node3', via: 'guest', resources: ['vm:102'] },
      'failed',
      'no',
      T0 + 50,
    );
    expect(log.list()).toMatchObject([
      { sid: 'vm:101', result: 'succeeded', requestedAt: T0, endedAt: T0 + 40 },
      { sid: 'vm:102', result: 'failed', requestedAt: undefined, endedAt: T0 + 50, reason: 'no', via: 'guest' },
    ]);
    for (let i = 0; i < MOTION_LOG_MAX + 5; i++) log.requested(motionRecord({ sid: `vm:${1000 + i}` }));
    expect(log.list()).toHaveLength(MOTION_LOG_MAX);
    expect(log.list(2).map((m) => m.sid)).toEqual([
      `vm:${1000 + MOTION_LOG_MAX + 3}`,
      `vm:${1000 + MOTION_LOG_MAX + 4}`,
    ]);
  });
});

describe('the journal', () => {
  it('keeps the last good read and the failure of a later round; a read clears it', () => {
    const j = new Journal(10);
    const read = (round: number) => ({
      round,
      time: T0 + round,
      quorate: true,
      imbalance: 0.4,
      nodes: [],
      snapshot: snapshot([node('node1')], []),
    });
    j.observe(read(1));
    j.round(report(1), T0 + 1, 't1');
    expect(j.cluster).toMatchObject({ read: { round: 1 }, failure: undefined });
    j.round(
      report(2, { outcome: 'error', reason: 'api-error', message: 'reading the cluster failed (http, GET x): 500' }),
      T0 + 2,
      't2',
    );
    expect(j.cluster).toMatchObject({
      read: { round: 1 },
      failure: { round: 2, time: T0 + 2, message: 'reading the cluster failed (http, GET x): 500' },
    });
    // a standby round reads nothing and fails nothing: the failure stays until a read works
    j.round(report(3, { outcome: 'standby', reason: 'standby' }), T0 + 3, 't3');
    expect(j.cluster.failure?.round).toBe(2);
    j.observe(read(4));
    j.round(report(4), T0 + 4, 't4');
    expect(j.cluster).toMatchObject({ read: { round: 4 }, failure: undefined });
    expect(j.history.toJson().imbalance).toEqual([0.4, null, null, 0.4]);
    expect(j.decisions.query().map((d) => [d.round, d.timeText, d.outcome])).toEqual([
      [1, 't1', 'skip'],
      [2, 't2', 'error'],
      [3, 't3', 'standby'],
      [4, 't4', 'skip'],
    ]);
  });

  it('takes the stage, key and motion of a round line from its fields', () => {
    const j = new Journal(10);
    j.round(
      report(1, {
        outcome: 'move',
        reason: 'move',
        fields: { imbalance: 0.5, sid: 'vm:101', source: 'node1', target: 'node2', via: 'ha' },
      }),
      T0,
      't',
    );
    j.round(
      report(2, { fields: { stage: 'threshold-hold', code: 'holding', key: 'threshold-hold:holding' } }),
      T0,
      't',
    );
    expect(j.decisions.query()).toEqual([
      expect.objectContaining({ sid: 'vm:101', source: 'node1', target: 'node2' }),
      expect.objectContaining({ stage: 'threshold-hold', key: 'threshold-hold:holding' }),
    ]);
    expect(j.decisions.query()[1]).not.toHaveProperty('sid');
  });
});
