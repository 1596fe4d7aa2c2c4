import { describe, expect, test } from 'vitest';
import type { RecordedMotion } from '@poise/sim';
import { runScenario } from './scenario-table';

// The proof of issue 8: each balancer scenario of apps/sim/scenarios, run with the reference
// balancer (every variant key removed: `runScenario` starts from `REFERENCE_SETS`), with one
// key, and with the `recommended` preset; the bounds the issue asks for, checked on what the
// RunRecorder saw (motions with outcomes, samples), never on the log's wording. (The logs are
// pinned by conformance.test.ts.)

const DEFAULTS: string[] = [];
const RECOMMENDED = ['ha-auto-rebalance-preset=recommended'];
const BACKOFF = ['ha-auto-rebalance-backoff=60'];

const label = (m: RecordedMotion) => `${m.resources.join('+')}→${m.target}`;
/** Attempts per (bundle, target) pair. */
function attemptsPerPair(motions: readonly RecordedMotion[]): Map<string, number> {
  const out = new Map<string, number>();
  for (const m of motions) out.set(label(m), (out.get(label(m)) ?? 0) + 1);
  return out;
}
/** The motions issued at or after `from` and before `to` (seconds). */
const within = (motions: readonly RecordedMotion[], from: number, to: number) =>
  motions.filter((m) => m.time >= from && m.time < to);

/**
 * "At most one failed attempt per target before another guest moves": the failed motions of
 * `sid` before the first successful motion of another guest, counted per target.
 */
function failuresPerTargetBeforeAnotherMoves(motions: readonly RecordedMotion[], sid: string): number[] {
  const firstOther = motions.find((m) => m.ok === true && !m.resources.includes(sid));
  const before = motions.filter(
    (m) => m.resources.includes(sid) && m.ok === false && (!firstOther || m.time < firstOther.time),
  );
  return [...attemptsPerPair(before).values()];
}

describe('symptom 1: a guest whose migration always fails (local cd-rom)', () => {
  const S = 'failing-migration-local-cdrom';

  test('defaults: the same failing motion is re-issued at least 10 times in 20 minutes', () => {
    const { motions } = runScenario(S, DEFAULTS).recorder;
    const first = motions[0]!;
    const same = within(motions, first.time, first.time + 1200).filter((m) => label(m) === label(first));
    expect(same.length).toBeGreaterThanOrEqual(10);
    expect(same.every((m) => m.ok === false)).toBe(true);
  });

  test('backoff: at most 3 attempts of any (bundle, target) pair, and another guest moves in the same series', () => {
    const { motions } = runScenario(S, BACKOFF).recorder;
    expect(Math.max(...attemptsPerPair(motions).values())).toBeLessThanOrEqual(3);
    // the series after the first failure: each next motion is issued one round (20 s) after the
    // previous outcome is known, without waiting for the hold rounds again
    const series = [motions[0]!];
    for (const m of motions.slice(1)) {
      const last = series[series.length - 1]!;
      if (last.ok !== false || m.time !== last.outcomeAt! + 20) break;
      series.push(m);
    }
    expect(series[0]!.ok).toBe(false);
    expect(series.some((m) => m.ok === true && !m.resources.includes('vm:101'))).toBe(true);
  });

  test.each([
    ['check-migratable', ['ha-auto-rebalance-check-migratable=1']],
    ['recommended', RECOMMENDED],
  ])('%s: the guest is never tried, the others are balanced', (_name, sets) => {
    const { recorder, summary } = runScenario(S, sets);
    expect(recorder.motions.filter((m) => m.resources.includes('vm:101'))).toEqual([]);
    expect(summary.failedMoves).toBe(0);
    expect(summary.moves).toBeGreaterThan(0);
  });
});

describe("the review's fa:109 counter-example (seed 004): at most one failed attempt per target before another guest moves", () => {
  const S = 'failing-migration-series-fa109';

  test('defaults: fa:109 to node2 is tried until its 9 failures are used up', () => {
    const { motions } = runScenario(S, DEFAULTS).recorder;
    expect(motions.filter((m) => label(m) === 'fa:109→node2' && m.ok === false)).toHaveLength(9);
  });

  test.each([
    ['backoff', BACKOFF],
    ['recommended', RECOMMENDED],
  ])('%s', (_name, sets) => {
    const { motions } = runScenario(S, sets).recorder;
    const perTarget = failuresPerTargetBeforeAnotherMoves(motions, 'fa:109');
    expect(perTarget.length).toBeGreaterThan(0);
    expect(Math.max(...perTarget)).toBeLessThanOrEqual(1);
  });
});

describe("the seed series' own case (seed 004: test-crs-dynamic-auto-rebalance5) with backoff 60 and cooldown 600", () => {
  test('at most one failed attempt per target before another guest moves; fa:102 arrives once its failures are used up', () => {
    const { motions } = runScenario('crs-dynamic-auto-rebalance5', [
      'ha-auto-rebalance-backoff=60',
      'ha-auto-rebalance-cooldown=600',
    ]).recorder;
    expect(Math.max(...failuresPerTargetBeforeAnotherMoves(motions, 'fa:102'))).toBeLessThanOrEqual(1);
    expect(motions.some((m) => m.resources.includes('fa:102') && m.ok === true)).toBe(true);
  });
});

describe('symptom 2: one dominant guest on two nodes, ±0.5 pp base-load noise', () => {
  const MIN27 = 27 * 60;

  test.each([1, 2, 3])('seed %i: defaults move at least 4 times in 27 minutes, recommended at most once', (seed) => {
    const defaults = runScenario('noisy-dominant-guest', DEFAULTS, { seed }).recorder.motions;
    expect(within(defaults, 0, MIN27).length).toBeGreaterThanOrEqual(4);
    const recommended = runScenario('noisy-dominant-guest', RECOMMENDED, { seed }).recorder.motions;
    expect(within(recommended, 0, MIN27).length).toBeLessThanOrEqual(1);
  });

  test.each([1, 2, 3])(
    'seed %i: recommended moves at most twice in 24 h, and follows the lasting load shift at 12 h',
    (seed) => {
      const { recorder, summary } = runScenario('noisy-dominant-guest-24h', RECOMMENDED, { seed });
      expect(summary.simSeconds).toBeGreaterThanOrEqual(86_400);
      expect(summary.moves).toBeLessThanOrEqual(2);
      expect(within(recorder.motions, 0, MIN27).length).toBeLessThanOrEqual(1);
      // node1's own load rises by 12.5 pp at 43200 (12 h): the guest leaves node1 within 10 minutes
      const shift = within(recorder.motions, 43_200, 43_800);
      expect(shift.map((m) => [m.source, m.target, m.ok])).toEqual([['node1', 'node2', true]]);
    },
  );

  test('the defaults ping-pong all day (the 24 h table row)', () => {
    const { summary } = runScenario('noisy-dominant-guest-24h', DEFAULTS);
    expect(summary.pingPongs).toBeGreaterThan(100);
  });
});

describe('symptom 3: an idle cluster (2–7 % node load, imbalance about 47 %), then pressure', () => {
  const S = 'idle-cluster-pressure';
  const PRESSURE_AT = 28_800; // node1 cpu pressure 14.5 % (after 8 h)
  const ALL_AT = 30_680; // node1's own load rises, every node under pressure

  test('defaults move in the idle 8 hours (with nothing to gain) and while every node is under pressure', () => {
    const { recorder } = runScenario(S, DEFAULTS);
    expect(within(recorder.motions, 0, PRESSURE_AT).length).toBeGreaterThan(0);
    expect(within(recorder.motions, ALL_AT, Infinity).length).toBeGreaterThan(0);
    // idle: every node below 8 % cpu and memory in every sample of the first 8 hours
    const r = recorder.rounds;
    for (let i = 0; i < recorder.nodes.length; i++) {
      for (let k = 0; k < r.time.length && r.time[k]! < PRESSURE_AT; k++) {
        expect(Math.max(r.cpu[i]![k]!, r.mem[i]![k]!)).toBeLessThan(0.08);
      }
    }
  });

  test.each([
    ['the pressure gate', ['ha-auto-rebalance-min-pressure-cpu=10']],
    ['recommended', RECOMMENDED],
  ])(
    '%s: no move in 8 idle hours; a guest leaves node1 within 2 minutes of its pressure; nothing while every node is under pressure, said once',
    (_name, sets) => {
      const { recorder, log } = runScenario(S, sets);
      expect(within(recorder.motions, 0, PRESSURE_AT)).toEqual([]);
      const relief = within(recorder.motions, PRESSURE_AT, PRESSURE_AT + 120);
      expect(relief.length).toBeGreaterThan(0);
      expect(relief[0]!).toMatchObject({ source: 'node1', ok: true });
      expect(within(recorder.motions, ALL_AT, Infinity)).toEqual([]);
      expect(log.match(/every node under pressure .*: the cluster needs more capacity\n/g)).toHaveLength(1);
    },
  );
});

describe('guest contention as the objective: move for the guests that wait, not for the figures', () => {
  const S = 'contention-hot-node';
  const BUSY_AT = 1380; // node1's guests busy: 13 of 16 cores, 38 % cpu pressure
  const SATURATED_AT = 2760; // every node's own load rises: 62 %, 55 %, 48 %
  const CONTENTION = ['ha-auto-rebalance-objective=contention'];

  test('defaults move in the idle phase, with nothing to gain', () => {
    const { recorder } = runScenario(S, DEFAULTS);
    expect(within(recorder.motions, 0, BUSY_AT).length).toBeGreaterThan(0);
  });

  test.each([
    ['contention', CONTENTION],
    ['recommended with contention', [...RECOMMENDED, ...CONTENTION]],
  ])(
    '%s: no move while idle; one guest leaves node1 within 2 minutes of the contention; none while every node is saturated, said once',
    (_name, sets) => {
      const { recorder, log } = runScenario(S, sets);
      expect(within(recorder.motions, 0, BUSY_AT)).toEqual([]);
      const relief = within(recorder.motions, BUSY_AT, BUSY_AT + 120);
      expect(relief).toHaveLength(1);
      expect(relief[0]!).toMatchObject({ source: 'node1', ok: true });
      expect(within(recorder.motions, SATURATED_AT, Infinity)).toEqual([]);
      expect(log.match(/contention: every node saturated .*: the cluster needs more capacity\n/g)).toHaveLength(1);
      expect(log.match(/contention: no guest waits/g)!.length).toBeGreaterThan(0);
    },
  );
});
