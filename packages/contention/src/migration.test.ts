import { describe, expect, it } from 'vitest';
import { ContentionError, MIGRATION_DEFAULTS, estimateMigration, migrationSettings } from './index';
import { migrationRate, preCopyClosedForm } from './migration';

const MIB = 1024 ** 2;
const GIB = 1024 ** 3;
const noThrottle = migrationSettings({ autoConverge: false, setupSeconds: 0 });

describe('estimateMigration against the closed form (Liu et al. 2011)', () => {
  // A 4 GiB guest at 1000 MiB/s with a pause of at most 0.1 s (100 MiB): stop once M·λⁿ ≤ 100 MiB.
  it.each([
    // cores busy → dirty rate (32 MiB/s per core) → λ
    { cores: 0, vcpus: 4, lambda: 0 }, // nothing dirtied: one copy, then an empty stop-and-copy
    { cores: 2, vcpus: 4, lambda: 0.064 }, // 64 / 1000
    { cores: 8, vcpus: 8, lambda: 0.256 },
    { cores: 15, vcpus: 16, lambda: 0.48 }, // below auto-converge's trigger anyway
  ])('$cores busy cores of $vcpus: λ $lambda', ({ cores, vcpus, lambda }) => {
    const e = estimateMigration(noThrottle, { memBytes: 4 * GIB, cpuCores: cores, vcpus });
    expect(e.lambda).toBeCloseTo(lambda, 12);
    const c = preCopyClosedForm(4 * GIB, lambda, 1000 * MIB, 0.1);
    expect(e.rounds).toBe(c.rounds);
    expect(e.transferredBytes / c.transferredBytes).toBeCloseTo(1, 12);
    expect(e.downtimeSeconds).toBeCloseTo(c.downtimeSeconds, 9);
    expect(e.durationSeconds).toBeCloseTo(c.transferredBytes / (1000 * MIB), 9);
    expect(e.converged).toBe(true);
  });

  it('works the rounds of λ = 0.256 by hand', () => {
    // M = 4096 MiB, R = 1000 MiB/s, stop at 100 MiB: 4096 → 1048.6 → 268.4 → 68.7 ≤ 100, n = 3;
    // sent 4096 + 1048.576 + 268.435 + 68.719 = 5481.73 MiB in 5.482 s, paused 68.719 / 1000 s
    const e = estimateMigration(noThrottle, { memBytes: 4 * GIB, cpuCores: 8, vcpus: 8 });
    expect(e.rounds).toBe(3);
    expect(e.transferredBytes / MIB).toBeCloseTo(5481.73, 2);
    expect(e.downtimeSeconds).toBeCloseTo(0.068719, 6);
    // the guest: 10 % of its activity (1) for 5.4817 s, plus the pause
    expect(e.guestSeconds).toBeCloseTo(0.1 * 5.48173 + 0.068719, 5);
  });

  it('the closed form itself: λ = ½, M = 8 R·T: three rounds, M·(1 − ½⁴)/(½) sent', () => {
    const c = preCopyClosedForm(800, 0.5, 1000, 0.1);
    // 800 → 400 → 200 → 100 ≤ 100: n = 3, sent 800 + 400 + 200 + 100 = 1500, paused 0.1 s
    expect(c).toEqual({ rounds: 3, transferredBytes: 1500, downtimeSeconds: 0.1 });
  });
});

describe('links shared and limited', () => {
  it('concurrent migrations share a link; the busier end decides; bwlimit caps', () => {
    const s = migrationSettings({ bwlimitBytesPerSecond: 300 * MIB });
    expect(migrationRate(MIGRATION_DEFAULTS, 1, 1)).toBe(1000 * MIB);
    expect(migrationRate(MIGRATION_DEFAULTS, 2, 4)).toBe(250 * MIB);
    expect(migrationRate(s, 1, 1)).toBe(300 * MIB);
    expect(migrationRate(s, 4, 1)).toBe(250 * MIB);
  });

  it('a shared link makes the same migration longer and dearer', () => {
    const one = estimateMigration(MIGRATION_DEFAULTS, { memBytes: 8 * GIB, cpuCores: 4, vcpus: 4 });
    const four = estimateMigration(MIGRATION_DEFAULTS, {
      memBytes: 8 * GIB,
      cpuCores: 4,
      vcpus: 4,
      sourceMigrations: 4,
    });
    expect(four.rateBytesPerSecond).toBe(250 * MIB);
    expect(four.durationSeconds).toBeGreaterThan(4 * (one.durationSeconds - 2));
    expect(four.guestSeconds).toBeGreaterThan(one.guestSeconds);
  });
});

describe('non-convergence', () => {
  // 32 busy cores dirty 1024 MiB/s over a 1000 MiB/s link: λ > 1, pre-copy alone never ends
  const busy = { memBytes: 16 * GIB, cpuCores: 32, vcpus: 32 };

  it('auto-converge throttles 20 %, then +10 % steps, until the rest fits in the pause', () => {
    const e = estimateMigration(migrationSettings({ setupSeconds: 0 }), busy);
    expect(e.converged).toBe(true);
    // each step needs two rounds dirtying more than half of what they copied: throttle t leaves
    // λ(1 − t) = 1.024(1 − t); it converges once the rounds shrink fast enough to reach 100 MiB
    expect(e.throttle).toBeGreaterThanOrEqual(0.2);
    expect(Math.round(e.throttle * 10) / 10).toBeCloseTo(e.throttle, 9); // 0.2, 0.3, …
    expect(e.throttleSeconds).toBeGreaterThan(0);
    expect(e.guestSeconds).toBeCloseTo(0.1 * e.durationSeconds + e.downtimeSeconds + e.throttleSeconds, 9);
  });

  it('without auto-converge it fails at the timeout, having sent rate × time', () => {
    const s = migrationSettings({ autoConverge: false, timeoutSeconds: 120, setupSeconds: 0 });
    const e = estimateMigration(s, busy);
    expect(e.converged).toBe(false);
    expect(e.durationSeconds).toBeCloseTo(120, 9);
    expect(e.transferredBytes / MIB).toBeCloseTo(120 * 1000, 3);
    expect(e.downtimeSeconds).toBe(0);
    expect(e.guestSeconds).toBeCloseTo(0.1 * 120, 9);
  });

  it('a dirty set never outgrows the memory: each round copies at most M', () => {
    const s = migrationSettings({ autoConverge: false, timeoutSeconds: 10, setupSeconds: 0 });
    const e = estimateMigration(s, { memBytes: 1 * GIB, cpuCores: 64, vcpus: 64 });
    // 10 s at 1000 MiB/s: rounds of 1024 MiB (1.024 s) each, then the cut one
    expect(e.rounds).toBe(9);
    expect(e.transferredBytes / MIB).toBeCloseTo(10_000, 6);
  });
});

describe('bad input is an error naming the field, never NaN', () => {
  const good = { memBytes: GIB, cpuCores: 1, vcpus: 2 };
  it.each([
    [{ ...good, memBytes: Number.NaN }, /migration\.memBytes must be a finite number from 0 to 2\^53, got NaN/],
    [{ ...good, memBytes: -1 }, /migration\.memBytes/],
    [{ ...good, cpuCores: Infinity }, /migration\.cpuCores .*got Infinity/],
    [{ ...good, vcpus: 0 }, /migration\.vcpus must be an integer ≥ 1, got 0/],
    [{ ...good, vcpus: 1.5 }, /migration\.vcpus/],
    [{ ...good, sourceMigrations: 0 }, /migration\.sourceMigrations/],
    [{ ...good, targetMigrations: '2' }, /migration\.targetMigrations .*got '2'/],
  ])('input %j', (input, message) => {
    expect(() => estimateMigration(MIGRATION_DEFAULTS, input as never)).toThrow(message);
  });

  it.each([
    [{ linkBytesPerSecond: 0 }, /migration\.linkBytesPerSecond must be a finite number > 0/],
    [{ maxDowntimeSeconds: -0.1 }, /migration\.maxDowntimeSeconds/],
    [{ timeoutSeconds: Number.NaN }, /migration\.timeoutSeconds .*got NaN/],
    [{ dirtyBytesPerCoreSecond: -1 }, /migration\.dirtyBytesPerCoreSecond/],
    [{ degradationShare: 1.5 }, /migration\.degradationShare must be a share from 0 to 1, got 1\.5/],
    [{ bwlimitBytesPerSecond: 0 }, /migration\.bwlimitBytesPerSecond must be null or/],
    [{ autoConverge: 'yes' }, /migration\.autoConverge must be true or false, got 'yes'/],
    [{ throttleInitial: 0.5, throttleMax: 0.4 }, /migration\.throttleInitial must be at most throttleMax/],
    [{ bandwidth: 1 }, /migration\.bandwidth is not a setting/],
  ])('settings %j', (settings, message) => {
    const call = () => migrationSettings(settings as never);
    expect(call).toThrow(ContentionError);
    expect(call).toThrow(message);
  });

  it('the closed form rejects λ ≥ 1 (it has no finite sum there)', () => {
    expect(() => preCopyClosedForm(GIB, 1, MIB, 0.1)).toThrow(/lambda must be a number from 0 to below 1, got 1/);
  });

  it('random valid inputs give finite, non-negative figures', () => {
    let seed = 7;
    const next = () => (seed = (seed * 1103515245 + 12345) % 2 ** 31) / 2 ** 31;
    for (let i = 0; i < 500; i++) {
      const s = migrationSettings({
        linkBytesPerSecond: 1 + next() * 2 * GIB,
        autoConverge: next() < 0.5,
        timeoutSeconds: 1 + next() * 600,
        maxDowntimeSeconds: 0.001 + next(),
      });
      const e = estimateMigration(s, {
        memBytes: next() * 64 * GIB,
        cpuCores: next() * 64,
        vcpus: 1 + Math.floor(next() * 64),
        sourceMigrations: 1 + Math.floor(next() * 4),
      });
      for (const v of [e.transferredBytes, e.durationSeconds, e.downtimeSeconds, e.guestSeconds, e.throttle])
        expect(Number.isFinite(v) && v >= 0).toBe(true);
      expect(e.durationSeconds).toBeLessThanOrEqual(s.setupSeconds + s.timeoutSeconds + s.maxDowntimeSeconds + 1e-9);
    }
  });
});
