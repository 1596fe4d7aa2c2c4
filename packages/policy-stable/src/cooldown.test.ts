import { describe, expect, it } from 'vitest';
import { percentReasonFormat } from '@poise/policy';
import { cooldownFilter } from './index';
import { type CooldownState } from './cooldown';
import { minImprovementAccept } from './dead-band';
import { candidate, failed, fixedContext, passed, succeeded } from './testing/support';

describe('cooldown', () => {
  const stage = cooldownFilter({ seconds: 600 });
  const EMPTY: CooldownState = { lastOutcomeAt: null, resources: [] };

  it('every member of a successful motion cools down from the outcome time; a failure does not', () => {
    const { state } = stage.observe!(
      { now: 420, outcomes: [succeeded(['vm:102', 'vm:101'], 'node2', 420), failed(['vm:103'], 'node3', 420)] },
      EMPTY,
    );
    // until = 420 + 600 = 1020, sorted by sid
    expect(state).toEqual({
      lastOutcomeAt: 420,
      resources: [
        { sid: 'vm:101', until: 1020 },
        { sid: 'vm:102', until: 1020 },
      ],
    });
  });

  it('drops a bundle with any cooling member and says which when nothing is left', () => {
    const state: CooldownState = { lastOutcomeAt: 420, resources: [{ sid: 'vm:101', until: 1020 }] };
    const both = [candidate('vm:101', ['node2']), candidate('vm:103', ['node2'], { resources: ['vm:103', 'vm:104'] })];
    expect(passed(stage.run(fixedContext({ now: 1000 }), { candidates: both }, state))).toEqual(['vm:103→node2']);
    const out = stage.run(
      fixedContext({ now: 1000 }),
      { candidates: [candidate('vm:100', ['node3'], { resources: ['vm:100', 'vm:101'] })] },
      state,
    );
    expect(out).toMatchObject({
      stop: 'cooldown of vm:101 until 1020',
      code: 'cooldown',
      key: 'cooldown:cooldown of vm:101 until 1020',
    });
    // at 1020 it is over (now < until cools)
    expect(passed(stage.run(fixedContext({ now: 1020 }), { candidates: both }, state))).toEqual([
      'vm:101→node2',
      'vm:103→node2',
    ]);
  });

  it('expired entries leave the state', () => {
    const state: CooldownState = { lastOutcomeAt: 420, resources: [{ sid: 'vm:101', until: 1020 }] };
    expect(stage.observe!({ now: 1020, outcomes: [] }, state).state.resources).toEqual([]);
    expect(stage.observe!({ now: 1000, outcomes: [] }, state).state).toBe(state);
  });

  it('lists at most three cooling resources, then how many more', () => {
    const resources = ['vm:1', 'vm:2', 'vm:3', 'vm:4', 'vm:5'].map((sid) => ({ sid, until: 700 }));
    const out = stage.run(
      fixedContext({ now: 600 }),
      { candidates: resources.map((r) => candidate(r.sid, ['node2'])) },
      { lastOutcomeAt: 100, resources },
    );
    expect('stop' in out && out.stop).toBe(
      'cooldown of vm:1 until 700, cooldown of vm:2 until 700, cooldown of vm:3 until 700 and 2 more',
    );
  });

  it('validates its state and options', () => {
    expect(() =>
      stage.validateState!({
        lastOutcomeAt: null,
        resources: [
          { sid: 'a', until: 1 },
          { sid: 'a', until: 2 },
        ],
      }),
    ).toThrow("stage 'cooldown': state field 'resources.1.sid' lists 'a' twice");
    expect(() => stage.validateState!({ lastOutcomeAt: null, resources: [{ sid: '', until: 1 }] })).toThrow(
      "state field 'resources.0.sid' must be a non-empty string",
    );
    expect(() => cooldownFilter({ seconds: -1 })).toThrow("cooldown seconds must be a finite number > 0, got '-1'");
  });
});

describe('min-improvement (absolute dead band)', () => {
  const stage = minImprovementAccept({ minImprovement: 0.05 });
  const selected = { sid: 'vm:101', source: 'node1', target: 'node2', imbalance: 0 };
  it.each([
    // 0.60 − 0.54 = 0.06 ≥ 0.05
    { before: 0.6, after: 0.54, pass: true },
    // 0.604 − 0.540 = 0.064: the seed's idle-cluster move passes a 5 pp band (the pressure gate is what stops it)
    { before: 0.604, after: 0.54, pass: true },
    // 0.62 − 0.60 = 0.020000000000000018 < 0.05, although relatively 3.2 % (printed to 4 digits)
    { before: 0.62, after: 0.6, pass: false, shown: '0.02' },
    // 0.35 − 0.30 = 0.04999999999999999 in doubles: just below (every digit, never '0.05 below 0.05')
    { before: 0.35, after: 0.3, pass: false, shown: '0.04999999999999999' },
  ])('$before → $after passes: $pass', ({ before, after, pass, shown }) => {
    const out = stage.run(fixedContext(), { imbalance: before, selected: { ...selected, imbalance: after } }, null);
    expect('stop' in out).toBe(!pass);
    if ('stop' in out) {
      expect(out.code).toBe('below-min-improvement');
      expect(out.stop).toBe(`improvement ${shown} below min-improvement 0.05`);
    }
  });

  it('prints the improvement and the band in the host’s units', () => {
    // 0.62 − 0.60 = 0.02 → 2.0 pp; 0.35 − 0.30 = 0.04999999999999999 → every digit, never '5.0 pp below 5.0 pp'
    const ctx = fixedContext({ format: percentReasonFormat() });
    const run = (before: number, after: number) =>
      stage.run(ctx, { imbalance: before, selected: { ...selected, imbalance: after } }, null);
    expect(run(0.62, 0.6)).toMatchObject({ stop: 'improvement 2.0 pp below min-improvement 5.0 pp' });
    expect(run(0.35, 0.3)).toMatchObject({ stop: 'improvement 4.999999999999999 pp below min-improvement 5.0 pp' });
  });

  it('reads the imbalance from the (adjusted) view when no gate computed it', () => {
    const evaluator = { imbalance: () => 0.9, score: () => [] };
    expect(
      'plan' in
        stage.run(
          fixedContext({ imbalanceValue: 0.1 }),
          { evaluator, selected: { ...selected, imbalance: 0.8 } },
          null,
        ),
    ).toBe(true);
  });

  it('rejects a negative or NaN band', () => {
    expect(() => minImprovementAccept({ minImprovement: -0.01 })).toThrow(
      "minImprovement must be a finite number >= 0, got '-0.01'",
    );
    expect(() => minImprovementAccept({ minImprovement: NaN })).toThrow('NaN');
  });
});
