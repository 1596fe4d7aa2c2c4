import { describe, expect, it } from 'vitest';
import {
  MIGRATION_DEFAULTS,
  assessMove,
  emptyModel,
  fitModel,
  learnMigrationSettings,
  migrationSettings,
  spellHorizon,
  type MovedBundle,
  type NodeContention,
} from './index';
import { HORIZON_MIN_SPELLS } from './horizon';

const GIB = 1024 ** 3;
const MIB = 1024 ** 2;
const node = (name: string, cpu: number, mem: number, activity: number): NodeContention => ({
  node: name,
  cpu,
  maxcpu: 16,
  mem,
  maxmem: 64 * GIB,
  activity,
});
const bundle: MovedBundle = { cpu: 2, mem: 4 * GIB, activity: 0.5, guests: 1, transferBytes: 4 * GIB, vcpus: 4 };
const migration = MIGRATION_DEFAULTS;

describe('assessMove with the migration model (cost–benefit)', () => {
  // The README's worked example (usage prior) priced by the migration model, defaults:
  // the guest keeps 2 of its 4 vcpus busy: dirty 64 MiB/s over 1000 MiB/s, λ = 0.064;
  // 4096 → 262.144 → 16.777 MiB (≤ 100): 4374.921 MiB in 4.374921 s + 2 s set-up = 6.374921 s,
  // paused 0.016777 s; the guest pays 0.1 · 0.5 · 6.374921 + 0.016777 = 0.335523.
  // The transfer's core: node1 at 16/16 cores has prior 50 % instead of 31.336806 %, its 6
  // guests wait 6 · (0.5 − 0.313368) = 1.119792 guest-s/s more for 6.374921 s = 7.138587;
  // node2 at 3/16 stays below the prior's knee (0). cost = 7.474110.
  // saved = (1.880208 − 0.386719) · (600 − 6.374921) = 886.572; net = 0.25 · 886.572 − 7.474
  const a = assessMove(
    fitModel(emptyModel()),
    { source: node('node1', 15, 32 * GIB, 6), target: node('node2', 2, 16 * GIB, 1), bundle },
    { migration },
  );
  const duration = 2 + (4096 + 262.144 + 16.777216) / 1000;

  it('takes the migration time and the guest’s own cost from the model', () => {
    expect(a.migration).toMatchObject({ converged: true, rounds: 2 });
    expect(a.migrationSeconds).toBeCloseTo(duration, 9);
    expect(a.migration!.guestSeconds).toBeCloseTo(0.1 * 0.5 * duration + 0.016777216, 9);
  });

  it('charges the transfer’s cpu to the guests of both nodes by the same predictions', () => {
    expect(a.transferSeconds).toBeCloseTo(6 * (0.5 - 0.31336806) * duration, 5);
    expect(a.costSeconds).toBeCloseTo(a.migration!.guestSeconds + a.transferSeconds, 12);
    expect(a.savedSeconds).toBeCloseTo((1.880208 - 0.386719) * (600 - duration), 2);
    expect(a.netSeconds).toBeCloseTo(0.25 * a.savedSeconds - a.costSeconds, 9);
  });

  it('counts the saving over the move’s own horizon when given', () => {
    const short = assessMove(
      fitModel(emptyModel()),
      { source: node('node1', 15, 32 * GIB, 6), target: node('node2', 2, 16 * GIB, 1), bundle, horizonSeconds: 60 },
      { migration },
    );
    expect(short.horizonSeconds).toBe(60);
    expect(short.savedSeconds).toBeCloseTo((a.savedSeconds * (60 - duration)) / (600 - duration), 9);
    // over a minute the same move barely pays: 0.25 · 79.9 − 7.47
    expect(short.netSeconds).toBeLessThan(a.netSeconds / 5);
  });

  it('a migration the model sees fail saves nothing and costs what it costs', () => {
    const stuck = migrationSettings({ autoConverge: false, timeoutSeconds: 60, dirtyBytesPerCoreSecond: 1000 * MIB });
    const f = assessMove(
      fitModel(emptyModel()),
      { source: node('node1', 15, 32 * GIB, 6), target: node('node2', 2, 16 * GIB, 1), bundle },
      { migration: stuck },
    );
    expect(f.migration!.converged).toBe(false);
    expect(f.savedSeconds).toBe(0);
    expect(f.netSeconds).toBe(-f.costSeconds);
    expect(f.costSeconds).toBeGreaterThan(0);
  });

  it('without the model (null) the fixed price stands', () => {
    const fixed = assessMove(fitModel(emptyModel()), {
      source: node('node1', 15, 32 * GIB, 6),
      target: node('node2', 2, 16 * GIB, 1),
      bundle,
    });
    expect(fixed.migration).toBeNull();
    expect(fixed.transferSeconds).toBe(0);
    expect(fixed.costSeconds).toBeCloseTo(1.6, 12);
  });

  it.each([
    [{ horizonSeconds: 0 }, /move\.horizonSeconds must be a number of seconds in \(0, 1e9\], got 0/],
    [{ horizonSeconds: Number.NaN }, /move\.horizonSeconds .*got NaN/],
    [{ bundle: { ...bundle, vcpus: 0 } }, /move\.bundle\.vcpus must be an integer >= 1, got 0/],
    [{ bundle: { ...bundle, vcpus: 2.5 } }, /move\.bundle\.vcpus/],
  ])('a bad move %j is an error naming the field', (over, message) => {
    const move = { source: node('node1', 15, 32 * GIB, 6), target: node('node2', 2, 16 * GIB, 1), bundle, ...over };
    expect(() => assessMove(fitModel(emptyModel()), move as never, { migration })).toThrow(message);
  });

  it('bad migration settings in the options name the field', () => {
    expect(() =>
      assessMove(fitModel(emptyModel()), {} as never, { migration: { linkBytesPerSecond: -1 } as never }),
    ).toThrow(/migration\.linkBytesPerSecond must be a finite number > 0/);
    expect(() => assessMove(fitModel(emptyModel()), {} as never, { migration: 'fast' as never })).toThrow(
      /contention option 'migration' must be null or migration settings, got 'fast'/,
    );
  });
});

describe('spellHorizon: how long a node’s hot spells last', () => {
  it.each([
    [[], 600, 600], // nothing seen: the fallback
    [[300, 900], 600, 600], // fewer than HORIZON_MIN_SPELLS: still the fallback
    [[300, 900, 1200], 600, 900], // the median of three
    [[300, 900, 1200, 40_000], 600, 1050], // one long spell moves the median a little, not the mean's 10,600
    [[10, 20, 30], 600, 60], // never below a minute
    [[1e6, 1e6, 1e6], 600, 86_400], // never above a day
    // only the newest nine count: six short ones after three long ones
    [[5000, 5000, 5000, 100, 100, 100, 100, 100, 100, 100, 100, 100], 600, 100],
  ])('%j (fallback %i) → %i', (durations, fallback, expected) => {
    expect(HORIZON_MIN_SPELLS).toBe(3);
    expect(spellHorizon(durations, fallback)).toBe(expected);
  });

  it.each([
    [[1, Number.NaN, 3], 600, /durations\.1 must be a finite number of seconds >= 0, got NaN/],
    [[-5], 600, /durations\.0/],
    [[], 0, /fallbackSeconds must be a finite number > 0, got 0/],
    ['300' as never, 600, /durations must be an array, got '300'/],
  ])('bad input %j, %j is an error naming it', (durations, fallback, message) => {
    expect(() => spellHorizon(durations, fallback)).toThrow(message);
  });
});

describe('learnMigrationSettings: the link rate from finished migrations', () => {
  it('the median rate of the copies once three are known; the settings as they are before', () => {
    const s = migrationSettings({ setupSeconds: 2 });
    // 4 GiB in 6 s (4 s of copy: 1024 MiB/s), 8 GiB in 10 s (1024), 2 GiB in 6 s (512)
    const tasks = [
      { durationSeconds: 6, transferredBytes: 4 * GIB },
      { durationSeconds: 10, transferredBytes: 8 * GIB },
      { durationSeconds: 6, transferredBytes: 2 * GIB },
    ];
    expect(learnMigrationSettings(s, tasks.slice(0, 2))).toEqual({ settings: s, learnedFrom: 0 });
    const learned = learnMigrationSettings(s, tasks);
    expect(learned.learnedFrom).toBe(3);
    expect(learned.settings.linkBytesPerSecond).toBe(1024 * MIB);
    // a task shorter than its set-up counts one second of copy
    expect(
      learnMigrationSettings(s, [
        ...tasks,
        { durationSeconds: 1, transferredBytes: 100 * MIB },
        { durationSeconds: 1, transferredBytes: 100 * MIB },
      ]).settings.linkBytesPerSecond,
    ).toBe(512 * MIB);
  });

  it.each([
    [[{ durationSeconds: 0, transferredBytes: 1 }], /tasks\.0\.durationSeconds must be a finite number > 0, got 0/],
    [[{ durationSeconds: 5, transferredBytes: -1 }], /tasks\.0\.transferredBytes/],
    [[null], /tasks\.0 must be an object, got null/],
  ])('bad task %j is an error naming it', (tasks, message) => {
    expect(() => learnMigrationSettings(MIGRATION_DEFAULTS, tasks as never)).toThrow(message);
  });
});
