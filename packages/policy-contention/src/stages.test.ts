import { describe, expect, it } from 'vitest';
import { emptyModel } from '@poise/contention';
import {
  type BalanceContext,
  Pipeline,
  PolicyError,
  hostCandidates,
  referencePipeline,
  selectBest,
  type Stage,
} from '@poise/policy';
import { pressurePlugin } from '@poise/policy-pressure';
import { contentionPlugin } from './index';
import { CONTENTION_PACE } from './pace';
import { contentionGate, type ContentionGateState } from './gate';
import { contentionHold } from './hold';
import { contentionMarginAccept } from './margin';
import { contentionScorer } from './score';
import {
  GIB,
  KNEE,
  balanceContext,
  cluster,
  guests,
  lines,
  loadDriven,
  pipelineFor,
  selectedPlan,
  stubAssessment,
  stubObjective,
} from './testing/support';

const REF = { threshold: 0.3, holdRounds: 3, margin: 0.1, method: 'bruteforce' as const };
const CONTENTION = { 'ha-auto-rebalance-objective': 'contention' };
const pipeline = () => pipelineFor(CONTENTION, REF);

describe('no move when no move helps', () => {
  it('an idle cluster: the reference moves (imbalance 45 % above the threshold), contention does not', () => {
    // node loads (1 + 2·1)/16 = 19 %, 1/16 = 6 %, 6 %: imbalance high, pressure nil
    const make = () => cluster(guests('node1', 101, 2, 1));
    const reference = make();
    reference.run(referencePipeline(REF), { until: 3600, beforeRound: loadDriven(KNEE, { noise: 0.3 }) });
    expect(reference.moves().length).toBeGreaterThan(0);
    const c = make();
    c.run(pipeline(), { until: 3600, beforeRound: loadDriven(KNEE, { noise: 0.3 }) });
    expect(c.moves()).toEqual([]);
    expect(lines(c)).toEqual([
      '0 stop no-contention: contention: no guest waits (highest cpu 0.4% < 5.0%, mem 0.0% < 2.0%)',
    ]);
  });

  it('every node saturated: one line saying the cluster needs more capacity, no move', () => {
    // 7 guests of 2 cores on each 16-core node: (1 + 14)/16 = 94 % → 67 % cpu pressure everywhere
    const c = cluster([...guests('node1', 101, 7, 2), ...guests('node2', 201, 7, 2), ...guests('node3', 301, 7, 2)]);
    c.run(pipeline(), { until: 3600, beforeRound: loadDriven(KNEE, { noise: 1 }) });
    expect(c.moves()).toEqual([]);
    expect(lines(c)).toHaveLength(1);
    expect(lines(c)[0]).toMatch(
      /^0 stop all-saturated: contention: every node saturated \(node1 cpu 6\d\.\d%, node2 cpu 6\d\.\d%, node3 cpu 6\d\.\d%\): the cluster needs more capacity$/,
    );
  });

  it('contention everywhere but no move predicted to help: no move, and the capacity notice', () => {
    // 5 guests of 2 cores per node: (1 + 10)/16 = 69 % → 17.5 % everywhere; any move lifts its
    // target past the knee by as much as it relieves the source, with more guests there to wait
    const c = cluster([...guests('node1', 101, 5, 2), ...guests('node2', 201, 5, 2), ...guests('node3', 301, 5, 2)]);
    c.run(pipeline(), { until: 3600, beforeRound: loadDriven(KNEE, { noise: 1 }) });
    expect(c.moves()).toEqual([]);
    const stops = lines(c).filter((l) => l.includes(' stop '));
    expect(stops).toHaveLength(1);
    expect(stops[0]).toMatch(
      /^40 stop no-gain: contention: no move predicted to lower guest contention \(best: vm:\d+ to node\d, -\d+ guest-seconds\); every node under contention \(.*\): the cluster needs more capacity$/,
    );
  });
});

describe('the move that spares the most', () => {
  it('a node whose waiting comes from its own work, with no guest to move: no move, said so', () => {
    // node1 runs 13 cores of its own (81 % → 42.5 %) and no guest; the guests on node2 and node3 wait for nothing
    const c = cluster([...guests('node2', 201, 2, 1), ...guests('node3', 301, 2, 1)], [{ cpu: 13 }]);
    c.run(pipeline(), { until: 600, beforeRound: loadDriven(KNEE) });
    expect(c.moves()).toEqual([]);
    expect(lines(c)).toEqual([
      '40 stop no-source-with-contention: contention: no movable guest on a node where guests wait (node1)',
    ]);
  });

  it('a hot node is relieved, onto the idle node, and the balancer stops once nothing waits', () => {
    // node1: 6 guests of 2 cores, (1 + 12)/16 = 81 % → 42.5 %; node2 one guest of 1 core (12.5 %), node3 idle (6 %)
    const c = cluster([...guests('node1', 101, 6, 2), ...guests('node2', 201, 1, 1)]);
    c.run(pipeline(), { until: 1800, beforeRound: loadDriven(KNEE, { noise: 1 }) });
    const moves = c.moves();
    expect(moves.length).toBeGreaterThanOrEqual(1);
    expect(moves.length).toBeLessThanOrEqual(2);
    expect(moves.every((m) => m.source === 'node1')).toBe(true);
    expect(moves[0]!.target).toBe('node3');
    // every move is announced with what it is predicted to spare
    expect(c.events.filter((e) => e.type === 'notice' && e.code === 'contention-move')).toHaveLength(moves.length);
    expect(lines(c).at(-1)).toMatch(/stop no-contention/);
    const load1 = c.telemetry().find((n) => n.node === 'node1')!;
    expect(KNEE(load1.cpu / load1.maxcpu)).toBeLessThan(5);
  });

  it('waits the hold rounds (quiet), and a round without contention starts them again', () => {
    const gate = contentionGate();
    const hold = contentionHold({ holdRounds: 3 });
    const pipeline = new Pipeline([
      gate,
      hold,
      hostCandidates(),
      contentionScorer({ method: 'bruteforce', limit: 1 }),
      selectBest(),
    ]);
    // node1's pressure follows its load (13 of 16 cores: 42 %; 4 cores: none)
    const nodes = (pressureCpu: number) => [
      {
        node: 'node1',
        cpu: pressureCpu > 0 ? 13 : 4,
        maxcpu: 16,
        mem: 8 * GIB,
        maxmem: 64 * GIB,
        servicesCpu: 12,
        servicesMem: 0,
        pressureCpu,
        pressureMem: 0,
      },
      {
        node: 'node2',
        cpu: 1,
        maxcpu: 16,
        mem: 8 * GIB,
        maxmem: 64 * GIB,
        servicesCpu: 0,
        servicesMem: 0,
        pressureCpu: 0,
        pressureMem: 0,
      },
    ];
    let state = pipeline.initialState();
    const outcomes: string[] = [];
    // pressure on node1 in rounds 0, 20; none at 40; again at 60, 80, 100 (no candidates: the round stops after the hold)
    for (const [now, pressure] of [
      [0, 42],
      [20, 42],
      [40, 0],
      [60, 42],
      [80, 42],
      [100, 42],
    ] as const) {
      const ctx = balanceContext(now, { nodes: () => nodes(pressure) });
      const out = pipeline.run(ctx, state);
      state = out.state;
      outcomes.push(
        out.decision.action === 'none' ? `${out.decision.code}${out.decision.quiet ? ' (quiet)' : ''}` : 'move',
      );
    }
    expect(outcomes).toEqual([
      'holding (quiet)',
      'holding (quiet)',
      'no-contention',
      'holding (quiet)',
      'holding (quiet)',
      'no-candidates',
    ]);
    // a continued series (backoff-series after a failure) does not wait the hold rounds again
    const objective = {
      name: 'guest contention',
      assess: () => undefined,
      gain: () => undefined,
      formatGain: String,
      pace: CONTENTION_PACE,
      motions: [],
      calmAt: null,
    } as never;
    const ctx = balanceContext(120);
    expect(hold.run(ctx, { continueSeries: true, objective }, { sustainedRounds: 0 })).toMatchObject({
      plan: { continueSeries: true },
    });
    expect(hold.run(ctx, { objective }, { sustainedRounds: 0 })).toMatchObject({
      code: 'holding',
      quiet: true,
      state: { sustainedRounds: 1 },
    });
    expect(() => hold.run(ctx, {}, { sustainedRounds: 0 })).toThrow(
      "stage 'contention-hold' needs the objective of the 'contention' gate",
    );
  });

  it('learns while the pressure gate stops the rounds (it runs first)', () => {
    const c = cluster(guests('node1', 101, 2, 1));
    const withPressure = pipelineFor({ ...CONTENTION, 'ha-auto-rebalance-min-pressure-cpu': 10 }, REF, [
      contentionPlugin,
      pressurePlugin,
    ]);
    expect(withPressure.stages.map((s) => s.name).slice(0, 4)).toEqual([
      'motion-in-flight',
      'contention',
      'pressure',
      'contention-hold',
    ]);
    const state = c.run(withPressure, { until: 200, beforeRound: loadDriven(KNEE) });
    expect((state.contention as ContentionGateState).model.nodes[0]!.cpu.bins.reduce((s, b) => s + b.count, 0)).toBe(9);
  });
});

describe('the gate learns every round it runs, and says what it cannot know', () => {
  it('keeps the model in its state (plain JSON, bounded) whether the round goes on or not', () => {
    const c = cluster(guests('node1', 101, 2, 1));
    const state = c.run(pipeline(), { until: 600, beforeRound: loadDriven(KNEE, { noise: 0.5 }) });
    const gate = state.contention as ContentionGateState;
    expect(gate.model.nodes.map((n) => n.node)).toEqual(['node1', 'node2', 'node3']);
    // 30 rounds, the first has nothing to compare with: 29 settled samples per node
    expect(gate.model.nodes[0]!.cpu.bins.reduce((s, b) => s + b.count, 0)).toBe(29);
  });

  it('a node without PSI is predicted from its load, said once', () => {
    const c = cluster([...guests('node1', 101, 7, 2), ...guests('node2', 201, 1, 1)]);
    c.run(pipeline(), { until: 600, beforeRound: loadDriven(KNEE, { noise: 1, silent: ['node1', 'node2'] }) });
    const notices = lines(c).filter((l) => l.includes('contention-usage-based'));
    expect(notices).toEqual([
      '0 notice contention-usage-based: no pressure history for node1 (cpu, mem), node2 (cpu, mem): predicted from the load alone',
    ]);
    // node1 at (1 + 14)/16 = 94 %: the prior predicts 33 %, so it acts on the usage alone
    expect(c.moves()[0]).toMatchObject({ source: 'node1' });
    expect(lines(c).find((l) => l.includes('contention-move'))).toMatch(/confidence 0\.25, usage\)$/);
  });

  it('no node reports PSI: the rounds are the imbalance’s, move for move as the reference, said once', () => {
    const make = () => cluster([...guests('node1', 101, 7, 2), ...guests('node2', 201, 1, 1)]);
    const silent = loadDriven(KNEE, { noise: 1, silent: ['node1', 'node2', 'node3'] });
    const reference = make();
    reference.run(referencePipeline(REF), { until: 3600, beforeRound: silent });
    expect(reference.moves().length).toBeGreaterThan(0);
    const c = make();
    c.run(pipeline(), { until: 3600, beforeRound: silent });
    expect(c.moves()).toEqual(reference.moves());
    const drop = (l: string) => !l.includes('notice contention-');
    expect(lines(c).filter(drop)).toEqual(lines(reference));
    expect(lines(c).filter((l) => !drop(l))).toEqual([
      '0 notice contention-no-psi: no node reports pressure (PSI): balancing the load imbalance (the reference objective) until one does',
    ]);
  });

  it('a node reporting PSI again hands the rounds back to the contention, said once each way', () => {
    const c = cluster([...guests('node1', 101, 7, 2), ...guests('node2', 201, 1, 1)]);
    const silent = loadDriven(KNEE, { noise: 1, silent: ['node1', 'node2', 'node3'] });
    const psi = loadDriven(KNEE, { noise: 1 });
    // the imbalance threshold (30 %) is never passed in the first 60 s: hold rounds
    c.run(pipeline(), { until: 600, beforeRound: (r) => (r.time < 60 ? silent(r) : psi(r)) });
    expect(lines(c).filter((l) => l.includes('notice contention-') && !l.includes('contention-move'))).toEqual([
      '0 notice contention-no-psi: no node reports pressure (PSI): balancing the load imbalance (the reference objective) until one does',
      '60 notice contention-psi: nodes report pressure (PSI): balancing guest contention',
    ]);
    expect(c.moves().length).toBeGreaterThan(0);
  });

  it('a round without PSI ends the hot spell of the pace: the motions before it no longer count', () => {
    const gate = contentionGate();
    const node = (name: string) => ({
      node: name,
      cpu: 8,
      maxcpu: 16,
      mem: 8 * GIB,
      maxmem: 64 * GIB,
      servicesCpu: 8,
      servicesMem: 8 * GIB,
    });
    const ctx = balanceContext(900, { nodes: () => [node('node1'), node('node2')] });
    const out = gate.run(ctx, {}, gate.initialState());
    expect(out).toMatchObject({ plan: {}, state: { noPsi: true, calmAt: 900 } });
  });

  it('names a corrupt restored state', () => {
    const gate = contentionGate();
    const good = gate.initialState();
    expect(() => contentionHold({ holdRounds: 3 }).validateState!({ sustainedRounds: -1 })).toThrow(
      "stage 'contention-hold': state field 'sustainedRounds' must be an integer from 0 to 9007199254740991, got -1",
    );
    expect(() => gate.validateState!({ ...good, model: { version: 1, nodes: [{ node: 'node1' }] } })).toThrow(
      new PolicyError(
        'invalid-state',
        "stage 'contention': contention model state field 'nodes.0.at' must be a finite number in -1.7976931348623157e+308..1.7976931348623157e+308, got undefined",
      ),
    );
    expect(() => gate.validateState!({ ...good, fallback: [3] })).toThrow(
      "stage 'contention': state field 'fallback.0' must be a non-empty string, got 3",
    );
    expect(gate.validateState!(JSON.parse(JSON.stringify({ ...good, model: emptyModel() })))).toEqual(good);
  });
});

describe('the host contract', () => {
  const ctx = (over: Partial<BalanceContext>): BalanceContext => ({
    now: 0,
    motionInFlight: false,
    imbalance: () => 0.5,
    candidates: () => [{ leader: 'vm:101', resources: ['vm:101'], targets: ['node2'], source: 'node1' }],
    score: () => [],
    ...over,
  });
  const node = (name: string, cpu: number, pressureCpu?: number) => ({
    node: name,
    cpu,
    maxcpu: 16,
    mem: 8 * GIB,
    maxmem: 64 * GIB,
    servicesCpu: 0,
    servicesMem: 0,
    pressureCpu,
    pressureMem: 0,
  });
  const gateOnly = new Pipeline([
    contentionGate(),
    hostCandidates(),
    contentionScorer({ method: 'bruteforce', limit: 4 }),
    selectBest(),
  ]);

  it('needs nodes() and, to judge a move, guests()', () => {
    expect(() => gateOnly.run(ctx({}), {})).toThrow(
      new PolicyError('invalid-context', "stage 'contention' needs 'ctx.nodes()', which the host does not provide"),
    );
    expect(() => gateOnly.run(ctx({ nodes: () => [node('node1', 14, 50), node('node2', 2, 0)] }), {})).toThrow(
      new PolicyError('invalid-context', "stage 'contention' needs 'ctx.guests()', which the host does not provide"),
    );
  });

  it('a candidate whose members the host does not report cannot be judged: the round stops, naming it', () => {
    const { decision } = gateOnly.run(
      ctx({ nodes: () => [node('node1', 14, 50), node('node2', 2, 0)], guests: () => [] }),
      {},
    );
    expect(decision).toMatchObject({
      action: 'none',
      code: 'not-assessable',
      reason: 'contention: no candidate can be judged (no guest or node telemetry for vm:101 to node2)',
    });
  });

  it('the scorer and the margin need the gate before them', () => {
    const stages: Stage[] = [hostCandidates(), contentionScorer({ method: 'bruteforce', limit: 1 }), selectBest()];
    expect(() => new Pipeline(stages).run(ctx({}), {})).toThrow(
      "stage 'contention-score' needs the objective of the 'contention' gate (plan.objective), got none",
    );
    const margin = contentionMarginAccept({ margin: 0.1, minGainSeconds: 30 });
    expect(() =>
      margin.run(
        ctx({}),
        { selected: { sid: 'vm:101', source: 'node1', target: 'node2', imbalance: 0 } },
        margin.initialState(),
      ),
    ).toThrow("stage 'contention-margin' needs the objective");
  });

  it('the margin: what a move spares against what the moving guests wait now', () => {
    const margin = contentionMarginAccept({ margin: 0.1, minGainSeconds: 30 });
    const judged = (rateBefore: number, rateAfter: number, movingRate: number) =>
      margin.run(
        ctx({}),
        selectedPlan(stubObjective(stubAssessment({ rateBefore, rateAfter, movingRate }))),
        margin.initialState(),
      );
    // a crowded hot node: one guest of many relieves 2 % of the two nodes' contention, but spares
    // 3 times what it waits itself: it moves (the nodes' whole contention would never let one go)
    expect(judged(10, 9.8, 0.066)).toMatchObject({ plan: expect.anything() });
    // most of the guest's waiting shifted onto the target: it spares 8 % of what it waits now
    // (59 guest-seconds: above the minimum)
    expect(judged(10, 9.9, 1.25)).toMatchObject({
      code: 'below-margin',
      stop: 'contention: vm:101 to node2 spares 8.0% of what the moving guests wait on node1, below margin 10.0%',
    });
  });

  it('rejects bad options', () => {
    expect(() => contentionHold({ holdRounds: -1 })).toThrow(
      "contention holdRounds must be a non-negative integer, got '-1'",
    );
    expect(() => contentionGate({ model: { horizonSeconds: 0 } })).toThrow(
      "contention option 'horizonSeconds' must be a number of seconds in (0, 1e9], got 0",
    );
    expect(() => contentionScorer({ method: 'best' as never, limit: 1 })).toThrow("unknown method 'best'");
    expect(() => contentionScorer({ method: 'topsis', limit: 0 })).toThrow(
      "contention score limit must be an integer >= 1, got '0'",
    );
    expect(() => contentionScorer({ method: 'topsis', limit: 1, minGainSeconds: Number.NaN })).toThrow(
      "contention minGainSeconds must be a finite number >= 0, got 'NaN'",
    );
    expect(() => contentionMarginAccept({ margin: Number.NaN, minGainSeconds: 30 })).toThrow(
      "contention margin must be a finite number, got 'NaN'",
    );
    expect(() => contentionMarginAccept({ margin: 0.1, minGainSeconds: -1 })).toThrow(
      "contention minGainSeconds must be a finite number >= 0, got '-1'",
    );
  });
});
