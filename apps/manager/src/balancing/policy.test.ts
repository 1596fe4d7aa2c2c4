import { describe, expect, it } from 'vitest';
import { BUILTIN_REGISTRY } from '@poise/ha';
import { contentionPlugin } from '@poise/policy-contention';
import { planPlugin } from '@poise/policy-plan';
import { stablePlugin } from '@poise/policy-stable';
import { parseConfig, withPolicyLayer } from '../config/load';
import { buildUsageModel, migrationCandidates, restrictToModel } from './model';
import { balanceContext, buildPolicy, checkPipelineState } from './policy';
import { GIB, haGuest, node, snapshot } from '../testing/support';

const policyOf = (policy: Record<string, unknown>) =>
  buildPolicy(parseConfig({ policy, sim: { 'case-dir': '/x' } }, undefined).policy);
/** The reference preset and the given keys. */
const referenceWith = (policy: Record<string, unknown>) =>
  policyOf({ 'ha-auto-rebalance-preset': 'reference', ...policy });

describe('buildPolicy', () => {
  it('by default it is the recommended preset, and says where its keys come from', () => {
    const p = policyOf({});
    expect(p.description).toBe(
      'motion-in-flight → contention → smoothing → backoff-series → pressure → contention-hold → candidates → pressure-source → cooldown → backoff → migratable → ' +
        'contention-score → select-cost → contention-margin → min-improvement: threshold 30%, hold 3 rounds, margin 10%, method bruteforce; ' +
        'preset recommended, objective contention, backoff 60 s, cooldown 600 s, min-improvement 5 pp, smoothing 300 s, cost-weight 0.2, memhost, min-pressure-cpu 10%, ' +
        'min-pressure-mem 5%, pressure-missing balance, check-migratable',
    );
    expect(p.sources).toBe(
      "policy keys: from poise-manager's defaults: hold-duration 3, margin 10, method bruteforce, preset recommended, threshold 30",
    );
    expect([p.needs.memhost, p.needs.guestConfigs, p.needs.nodePressure]).toEqual([true, true, true]);
  });

  it.each(['reference', 'none'])('preset %s is exactly the reference pipeline', (preset) => {
    const p = policyOf({ 'ha-auto-rebalance-preset': preset });
    expect(p.pipeline.stages.map((s) => s.name)).toEqual([
      'motion-in-flight',
      'threshold-hold',
      'candidates',
      'score-bruteforce',
      'select-best',
      'relative-margin',
    ]);
    expect(p.description).toBe(
      `motion-in-flight → threshold-hold → candidates → score-bruteforce → select-best → relative-margin: threshold 30%, hold 3 rounds, margin 10%, method bruteforce; preset ${preset}: no variant stage`,
    );
    expect([p.problems, p.needs.memhost, p.needs.guestConfigs, p.thresholdFraction]).toEqual([[], false, false, 0.3]);
    // an explicit key still turns its stage on
    expect(policyOf({ 'ha-auto-rebalance-preset': preset, 'ha-auto-rebalance-backoff': 60 }).description).toMatch(
      new RegExp(`; preset ${preset}, backoff 60 s$`),
    );
  });

  it('the preset turns every stage on; an explicit key overrides it, 0 turns a stage off', () => {
    const p = policyOf({
      'ha-auto-rebalance-preset': 'recommended',
      'ha-auto-rebalance-cooldown': 0,
      'ha-auto-rebalance-backoff': '120',
    });
    expect(p.pipeline.stages.map((s) => s.name)).toEqual([
      'motion-in-flight',
      'contention',
      'smoothing',
      'backoff-series',
      'pressure',
      'contention-hold',
      'candidates',
      'pressure-source',
      'backoff',
      'migratable',
      'contention-score',
      'select-cost',
      'contention-margin',
      'min-improvement',
    ]);
    expect(BUILTIN_REGISTRY.settingsOf(p.settings, stablePlugin)).toMatchObject({
      backoffSeconds: 120,
      cooldownSeconds: 0,
      memhost: true,
    });
    expect([p.needs.memhost, p.needs.guestConfigs]).toEqual([true, true]);
  });

  it.each([
    [
      'ha-auto-rebalance-backoff',
      'abc',
      "(defaults): policy.ha-auto-rebalance-backoff: invalid value 'abc' (seconds, 0 to 3600)",
    ],
    [
      'ha-auto-rebalance-min-pressure-cpu',
      150,
      "(defaults): policy.ha-auto-rebalance-min-pressure-cpu: invalid value '150' (percent, 0 to 100)",
    ],
    ['ha-auto-rebalance-memhost', 'yes', "(defaults): policy.ha-auto-rebalance-memhost: invalid value 'yes' (0 or 1)"],
    [
      'ha-auto-rebalance-pressure-missing',
      'panic',
      "(defaults): policy.ha-auto-rebalance-pressure-missing: invalid value 'panic' (one of balance, hold)",
    ],
    [
      'ha-auto-rebalance-objective',
      '',
      "(defaults): policy.ha-auto-rebalance-objective: invalid value '' (one of imbalance, contention)",
    ],
  ])('a bad %s is refused at load, naming the key and the value (no fallback to off)', (key, value, message) => {
    expect(() => referenceWith({ [key]: value })).toThrow(message);
  });

  it('a bad value that got past the config is refused by buildPolicy, named where it was set', () => {
    const config = parseConfig({ sim: { 'case-dir': '/x' } }, '/etc/poise/c.yaml');
    const layered = withPolicyLayer(config, {
      source: { kind: 'case', label: "the crs of '/x/datacenter.cfg'", keyPath: "'/x/datacenter.cfg': crs." },
      values: new Map([['ha-auto-rebalance-backoff', 'abc']]),
    });
    expect(() => buildPolicy(layered.policy)).toThrow(
      "'/x/datacenter.cfg': crs.ha-auto-rebalance-backoff: invalid value 'abc' (seconds, 0 to 3600)",
    );
  });

  it('the plan key puts the plan-guided stage in the select slot (over the cost stage); a bad value names the key', () => {
    expect(referenceWith({ 'ha-auto-rebalance-plan': 1 }).pipeline.stages.map((s) => s.name)).toEqual([
      'motion-in-flight',
      'threshold-hold',
      'candidates',
      'score-bruteforce',
      'plan-guided',
      'relative-margin',
    ]);
    const recommended = policyOf({ 'ha-auto-rebalance-plan': 1 });
    expect(recommended.pipeline.stages.map((s) => s.name)).toContain('plan-guided');
    expect(recommended.pipeline.stages.map((s) => s.name)).not.toContain('select-cost');
    expect(recommended.description).toMatch(/, plan-guided(,|$)/);
    expect(BUILTIN_REGISTRY.settingsOf(recommended.settings, planPlugin)).toEqual({ plan: true });
    expect(recommended.needs.planInput).toBe(true);
    expect(() => policyOf({ 'ha-auto-rebalance-plan': 'maybe' })).toThrow(
      "(defaults): policy.ha-auto-rebalance-plan: invalid value 'maybe' (0 or 1)",
    );
  });

  it("the plan-guided stage plans on the round's snapshot", () => {
    const snap = snapshot(
      [node('node1', { cpu: 9 }), node('node2', { cpu: 1 })],
      [haGuest('vm:101', 'node1'), haGuest('vm:102', 'node1')],
    );
    const model = buildUsageModel(snap);
    const ctx = balanceContext({
      now: 0,
      snapshot: snap,
      model,
      candidates: restrictToModel(migrationCandidates(snap), model),
      motionInFlight: false,
      outcomes: [],
      onScoreError: () => undefined,
    });
    const input = ctx.planInput!() as { nodes: { name: string }[]; guests: { id: string; node: string }[] };
    expect(input.nodes.map((n) => n.name).sort()).toEqual(['node1', 'node2']);
    expect(input.guests.map((g) => [g.id, g.node])).toEqual([
      ['vm:101', 'node1'],
      ['vm:102', 'node1'],
    ]);
  });

  it('the contention objective replaces the hold, the scorer and the margin; a bad value names the key', () => {
    const p = policyOf({ 'ha-auto-rebalance-preset': 'reference', 'ha-auto-rebalance-objective': 'contention' });
    expect(p.pipeline.stages.map((s) => s.name)).toEqual([
      'motion-in-flight',
      'contention',
      'contention-hold',
      'candidates',
      'contention-score',
      'select-best',
      'contention-margin',
    ]);
    expect(p.description).toMatch(/; preset reference, objective contention$/);
    expect(BUILTIN_REGISTRY.settingsOf(p.settings, contentionPlugin)).toEqual({
      objective: 'contention',
      minGainSeconds: 30,
      costBenefit: false,
    });
    expect(() => policyOf({ 'ha-auto-rebalance-objective': 'fast' })).toThrow(
      "(defaults): policy.ha-auto-rebalance-objective: invalid value 'fast' (one of imbalance, contention)",
    );
    const frugal = policyOf({
      'ha-auto-rebalance-preset': 'reference',
      'ha-auto-rebalance-objective': 'contention',
      'ha-auto-rebalance-contention-min-gain': 120,
    });
    expect(frugal.description).toMatch(
      /; preset reference, objective contention, contention-min-gain 120 guest-seconds$/,
    );
    expect(BUILTIN_REGISTRY.settingsOf(frugal.settings, contentionPlugin)).toEqual({
      objective: 'contention',
      minGainSeconds: 120,
      costBenefit: false,
    });
    expect(() =>
      policyOf({ 'ha-auto-rebalance-objective': 'contention', 'ha-auto-rebalance-contention-min-gain': 'lots' }),
    ).toThrow(
      "(defaults): policy.ha-auto-rebalance-contention-min-gain: invalid value 'lots' (guest-seconds, 0 to 86400)",
    );
    // a key that means nothing beside the others is no bad value: a warning at start
    expect(
      policyOf({ 'ha-auto-rebalance-objective': 'imbalance', 'ha-auto-rebalance-contention-min-gain': 60 }).problems,
    ).toEqual([expect.stringMatching(/^policy\.ha-auto-rebalance-contention-min-gain: value 60 has no effect/)]);
  });
});

describe('checkPipelineState', () => {
  const p = policyOf({ 'ha-auto-rebalance-backoff': 60, 'ha-auto-rebalance-cooldown': 600 });
  it('names every corrupt stage and field', () => {
    const result = checkPipelineState(p.pipeline, {
      'threshold-hold': { sustainedRounds: 1 },
      backoff: { lastOutcomeAt: 'x', pairs: [], series: [] },
      cooldown: { lastOutcomeAt: null, resources: 'none' },
    });
    expect(result).toEqual({
      problems: [
        {
          stage: 'cooldown',
          message: expect.stringMatching(/^stage 'cooldown': state field 'resources' must be an array/),
        },
        {
          stage: 'backoff',
          message: "stage 'backoff': state field 'lastOutcomeAt' must be a finite number or null, got \"x\"",
        },
      ],
    });
  });

  it('keeps a valid state, and the states of stages the pipeline does not have', () => {
    const state = { 'threshold-hold': { sustainedRounds: 2 }, 'old-stage': { x: 1 } };
    expect(checkPipelineState(p.pipeline, state)).toEqual({ state: expect.objectContaining(state) });
  });
});

describe('balanceContext', () => {
  // node1 measures 10 cores / 40 GiB; its guests account for 2 + 2 cores and 4 + 6 GiB (memhost 6 GiB for vm:102)
  const nodes = [
    node('node1', { cpu: 10, mem: 40 * GIB, pressure: { cpuSome: 12.5, memSome: undefined } }),
    node('node2', { cpu: 1, mem: 4 * GIB }),
    node('node3', { online: false }),
  ];
  const guests = [
    haGuest('vm:101', 'node1'),
    haGuest('vm:102', 'node1', { stats: { cpu: 2, maxcpu: 4, mem: 4 * GIB, maxmem: 8 * GIB, memhost: 6 * GIB } }),
  ];
  const snap = {
    ...snapshot(nodes, guests),
    guestConfigs: new Map([['vm:101', { ide2: 'local:iso/d.iso,media=cdrom' }]]),
    storageShared: new Map([['ceph', true]]),
  };

  function ctx(memhost: boolean) {
    const model = buildUsageModel(snap, { memhost });
    return balanceContext({
      now: 100,
      snapshot: snap,
      model,
      candidates: restrictToModel(migrationCandidates(snap), model),
      motionInFlight: false,
      outcomes: [],
      onScoreError: () => undefined,
    });
  }

  it('nodes(): the measured stats, the part the guests account for, and the PSI (undefined when not reported)', () => {
    expect(ctx(true).nodes!()).toEqual([
      {
        node: 'node1',
        cpu: 10,
        maxcpu: 16,
        mem: 40 * GIB,
        maxmem: 64 * GIB,
        servicesCpu: 4,
        servicesMem: 10 * GIB,
        pressureCpu: 12.5,
        pressureMem: undefined,
      },
      {
        node: 'node2',
        cpu: 1,
        maxcpu: 16,
        mem: 4 * GIB,
        maxmem: 64 * GIB,
        servicesCpu: 0,
        servicesMem: 0,
        pressureCpu: undefined,
        pressureMem: undefined,
      },
    ]);
    expect(ctx(false).nodes!()[0]).toMatchObject({ servicesMem: 8 * GIB });
  });

  it('candidates(): the source, and the memory a motion copies (memhost when on and reported)', () => {
    expect(
      ctx(true)
        .candidates()
        .map((c) => [c.leader, c.source, c.transferBytes]),
    ).toEqual([
      ['vm:101', 'node1', 4 * GIB],
      ['vm:102', 'node1', 6 * GIB],
    ]);
    expect(
      ctx(false)
        .candidates()
        .map((c) => c.transferBytes),
    ).toEqual([4 * GIB, 4 * GIB]);
  });

  it('adjust(): the imbalance and scores as if the listed nodes had the given usage', () => {
    const c = ctx(false);
    // measured loads: node1 (10/16 + 40/64)/2 = 0.625, node2 (1/16 + 4/64)/2 = 0.0625
    // adjusted node1 to node2's usage: both 0.0625, imbalance 0
    const adjusted = c.adjust!([{ node: 'node1', cpu: 1, mem: 4 * GIB }]);
    expect(c.imbalance()).toBeGreaterThan(0.5);
    expect(adjusted.imbalance()).toBe(0);
    expect(adjusted.score(c.candidates(), 'bruteforce', 1)[0]).toMatchObject({ source: 'node1', target: 'node2' });
  });

  it('guests(): each guest on a node of the model, its memory as the model moves it (memhost when on)', () => {
    expect(ctx(true).guests!()).toEqual([
      { sid: 'vm:101', node: 'node1', cpu: 2, maxcpu: 4, mem: 4 * GIB },
      { sid: 'vm:102', node: 'node1', cpu: 2, maxcpu: 4, mem: 6 * GIB },
    ]);
    expect(ctx(false).guests!()[1]).toMatchObject({ mem: 4 * GIB });
  });

  it('guestConfig() and sharedStorage(): from the snapshot, undefined when unknown', () => {
    const c = ctx(false);
    expect([
      c.guestConfig!('vm:101'),
      c.guestConfig!('vm:102'),
      c.sharedStorage!('ceph'),
      c.sharedStorage!('local'),
    ]).toEqual([{ ide2: 'local:iso/d.iso,media=cdrom' }, undefined, true, undefined]);
  });
});
