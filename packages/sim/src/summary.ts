import type { BalancerEvent } from '@poise/ha';
import { normalizedImbalance } from '@poise/imbalance';
import { nodeLoad, compareNames } from '@poise/usage';
import type { Simulation } from './simulation';
import type { NodeContention } from './pressure/model';

/** A resource moved back to a node it left at most this many seconds earlier is a ping-pong (30 min). */
const PING_PONG_WINDOW_SECONDS = 1800;
/**
 * A node is under cpu pressure while its PSI cpu "some" avg10 is at or above this (percent):
 * the seed's field value, the level of the `recommended` preset's pressure gate.
 */
const PRESSURE_CPU_THRESHOLD_PERCENT = 10;
/**
 * A node is under memory pressure while its PSI memory "some" avg10 is at or above this
 * (percent): memory stalls are the more severe (reclaim, then the OOM killer), so half the cpu
 * level, as the `recommended` preset's gate judges them.
 */
const PRESSURE_MEM_THRESHOLD_PERCENT = 5;

/** The levels (PSI some avg10, percent) at which a node counts as under pressure. */
export interface PressureThresholds {
  readonly cpu: number;
  readonly mem: number;
}

/** The summary's levels: {@link PRESSURE_CPU_THRESHOLD_PERCENT}, {@link PRESSURE_MEM_THRESHOLD_PERCENT}. */
const PRESSURE_THRESHOLDS: PressureThresholds = Object.freeze({
  cpu: PRESSURE_CPU_THRESHOLD_PERCENT,
  mem: PRESSURE_MEM_THRESHOLD_PERCENT,
});

/** One motion the balancer issued (a bundle: every member moves to the same target). */
export interface RecordedMotion {
  /** Seconds: when the balancer queued it. */
  readonly time: number;
  /** The bundle, as the balancer issued it. */
  readonly resources: readonly string[];
  readonly source: string;
  readonly target: string;
  /** `true`: every member arrived; `false`: it failed or was refused; `null`: still in flight at the end. */
  ok: boolean | null;
  /** Seconds: when the outcome became known (`null` while in flight). */
  outcomeAt: number | null;
  /** Why it failed (`migration error`, `refused`, ...). */
  detail?: string;
  /**
   * Per member (the order of `resources`): the time of the first sample at which it ran on the
   * target (the move's effect on the nodes is in that sample), `null` until then or never.
   */
  landedAt?: (number | null)[];
}

/**
 * One resource's part of a balancer motion: a bundle of k resources is k resource moves, each
 * with the bundle's times, nodes and outcome. What the summary counts, and what the lab's run
 * traces store.
 */
export interface ResourceMove {
  /** Seconds: when the balancer queued the motion. */
  readonly time: number;
  readonly sid: string;
  /** The node the resource was on when the motion was queued. */
  readonly source: string;
  readonly target: string;
  /** `true` arrived, `false` failed or refused (the whole bundle), `null` in flight at the end. */
  readonly ok: boolean | null;
  /** Seconds: when the outcome became known (`null` while in flight). */
  readonly outcomeAt: number | null;
  /** Why it failed. */
  readonly detail?: string;
  /**
   * Seconds: the first sample at which the resource ran on the target (its load then counts
   * there); `null` when it never did while recorded (failed, in flight, stopped); absent when the
   * record does not say.
   */
  readonly landedAt?: number | null;
}

/**
 * The load pressure model's columns of a recorded run (index i = node, r = sample), present only
 * when the run used it (`sim_options` `pressure-model` `load`). Ground truth: nothing a node
 * reports, so a policy never sees it.
 */
export interface TruthColumns {
  /** `cpuSome[i][r]`: node i's PSI cpu some share at sample r, percent, noise-free and without the average's delay. */
  readonly cpuSome: number[][];
  /** `memSome[i][r]`: the same for memory. */
  readonly memSome: number[][];
  /**
   * `cpuStall[i][r]`: guest-seconds node i's guests spent wanting cpu and waiting, from sample r
   * to the next (the last: to the end of the run).
   */
  readonly cpuStall: number[][];
  /** `memStall[i][r]`: guest-seconds node i's guests were stalled on memory, same interval. */
  readonly memStall: number[][];
  /** `migrationStall[i][r]`: guest-seconds of stall of migrations from node i that moved in that interval. */
  readonly migrationStall: number[][];
}

/**
 * The recorded time series, one column per quantity: index `r` = sample, index `i` = node in
 * {@link RunRecorder.nodes} order. A sample is taken when the recorder attaches and after
 * every round (the state the next round's manager reads) and holds until the next sample (the
 * last one until {@link RunRecorder.endTime}).
 */
export interface RecordedRounds {
  /** Sample times, seconds, increasing. */
  readonly time: number[];
  /**
   * Node imbalance of the measured loads of the online nodes: the normalised metric (the
   * `pve-9.2` one, 0..1, whatever the profile), load = (cpu/maxcpu + mem/maxmem) / 2; 0 with
   * fewer than two online nodes or no load.
   */
  readonly imbalance: number[];
  /** `cpu[i][r]`: node i's measured cpu as a fraction of its cores (≥ 0; above 1 when overcommitted). */
  readonly cpu: number[][];
  /** `mem[i][r]`: node i's measured memory as a fraction of its memory. */
  readonly mem: number[][];
  /** `pressureCpu[i][r]`: PSI cpu some avg10, percent; `null` = not reported. */
  readonly pressureCpu: (number | null)[][];
  /** `pressureMem[i][r]`: PSI memory some avg10, percent; `null` = not reported. */
  readonly pressureMem: (number | null)[][];
  /** `online[i][r]`: the node was online (powered, networked, quorate). */
  readonly online: boolean[][];
  /** The load pressure model's ground truth (absent when pressure is scripted). */
  truth?: TruthColumns;
}

/**
 * What a summary is computed from ({@link summarizeRun}): a recorded run, from a
 * {@link RunRecorder} or read back from a file (the lab's run traces).
 */
export interface RunRecord {
  /** Node names (the column order of `rounds`). */
  readonly nodes: readonly string[];
  /** The samples; only `time`, `imbalance`, `online`, the pressure columns and `truth` (when present) are read. */
  readonly rounds: Pick<RecordedRounds, 'time' | 'imbalance' | 'online' | 'pressureCpu' | 'pressureMem' | 'truth'>;
  /** Resource moves in issue order (times non-decreasing). */
  readonly moves: readonly ResourceMove[];
  /** Seconds: the end of the run (the last sample holds until then). */
  readonly endTime: number;
}

/** The summary of one run: what `poise-sim summary` prints (keys in this order). */
export interface RunSummary {
  /**
   * Guest contention-seconds: Σ over guests and time of the share each guest wanted cpu and
   * waited, was stalled on memory, or was stalled by its own migration (the load pressure
   * model's ground truth); `null` when the run did not use that model.
   */
  guestContentionSeconds: number | null;
  /**
   * The part of {@link guestContentionSeconds} migrations caused: the migrated guests' own cost
   * (slowdown, pause, throttle; a relocation's restart) and what the transfers' cpu made the
   * other guests of both ends wait; `null` when the run did not use the load pressure model.
   */
  migrationSeconds: number | null;
  /** Resource motions the balancer issued: a bundle of k members counts k; failed and refused ones included. */
  moves: number;
  /** Of those, the ones that failed or were refused (in-flight ones at the end are not failures). */
  failedMoves: number;
  /** Resource motions per sid (byte order). */
  movesBySid: Record<string, number>;
  /** Successful resource motions back to a node the resource left by an earlier successful balancer motion at most 30 min before (issue times). */
  pingPongs: number;
  /** Time-weighted mean of {@link RecordedRounds.imbalance} over [first sample, end]; `null` without elapsed time. */
  imbalanceTimeWeighted: number | null;
  /**
   * Node-seconds under pressure: Σ over samples of the sample's duration × the online nodes
   * whose cpu PSI ≥ 10 % or memory PSI ≥ 5 %; `null` when no node ever reported pressure.
   */
  pressureSeconds: number | null;
  /** Simulated seconds at the end of the run (the run starts at 0). */
  simSeconds: number;
}

/**
 * Records a run from the {@link Simulation} API (never from the log): node loads, imbalance and
 * pressure after every round (`onRound` + `sample()`), and the balancer's motions with their
 * outcomes (`onBalancerEvent`). Attach before stepping; {@link summary} at any time.
 *
 * Cost: O(nodes + services) per round for the sample, O(1) per balancer event; memory
 * O(rounds × nodes) (a 24 h run of 3 nodes is 4,320 samples of 3 nodes).
 */
export class RunRecorder {
  /** Node names in byte order (the column order of {@link rounds}). */
  readonly nodes: readonly string[];
  readonly rounds: RecordedRounds = {
    time: [],
    imbalance: [],
    cpu: [],
    mem: [],
    pressureCpu: [],
    pressureMem: [],
    online: [],
  };
  /** Balancer motions in issue order. */
  readonly motions: RecordedMotion[] = [];
  private end: number;
  private readonly unsubscribe: Array<() => void>;
  /** The nodes' stall totals when the last sample was taken (load pressure model). */
  private lastTotals: ReadonlyMap<string, NodeContention> | undefined;
  /** Successful motions some member of which has not run on the target yet. */
  private landing: RecordedMotion[] = [];

  constructor(private readonly sim: Simulation) {
    const first = sim.sample();
    this.nodes = [...first.keys()];
    const truth = sim.pressureModel === 'load';
    if (truth) this.rounds.truth = { cpuSome: [], memSome: [], cpuStall: [], memStall: [], migrationStall: [] };
    for (let i = 0; i < this.nodes.length; i++) {
      this.rounds.cpu.push([]);
      this.rounds.mem.push([]);
      this.rounds.pressureCpu.push([]);
      this.rounds.pressureMem.push([]);
      this.rounds.online.push([]);
      if (this.rounds.truth) for (const col of Object.values(this.rounds.truth) as number[][][]) col.push([]);
    }
    this.end = sim.time;
    this.lastTotals = sim.nodeContention();
    if (!sim.ended) this.take(sim.time);
    this.unsubscribe = [
      sim.onRound((e) => {
        this.end = e.time;
        this.closeInterval();
        if (!e.ended) this.take(e.time);
      }),
      sim.onBalancerEvent((e) => this.event(e)),
    ];
  }

  /** Seconds: the end of the last round seen. */
  get endTime(): number {
    return this.end;
  }

  /** Stops recording (the data stays). */
  detach(): void {
    for (const u of this.unsubscribe) u();
  }

  private take(time: number): void {
    const sample = this.sim.sample();
    const r = this.rounds;
    const loads: number[] = [];
    this.nodes.forEach((node, i) => {
      const s = sample.get(node)!;
      r.cpu[i]!.push(s.cpu / s.maxcpu);
      r.mem[i]!.push(s.mem / s.maxmem);
      r.pressureCpu[i]!.push(s.pressureCpu ?? null);
      r.pressureMem[i]!.push(s.pressureMem ?? null);
      r.online[i]!.push(s.online);
      if (r.truth) {
        r.truth.cpuSome[i]!.push(s.truthCpu ?? 0);
        r.truth.memSome[i]!.push(s.truthMem ?? 0);
        // filled when the interval closes (the next round's end)
        r.truth.cpuStall[i]!.push(0);
        r.truth.memStall[i]!.push(0);
        r.truth.migrationStall[i]!.push(0);
      }
      if (s.online) loads.push(nodeLoad(s.cpu, s.maxcpu, s.mem, s.maxmem));
    });
    r.time.push(time);
    r.imbalance.push(normalizedImbalance(loads));
    this.land(time);
  }

  /** The stall accrued since the last sample goes to that sample (it held until now). */
  private closeInterval(): void {
    const truth = this.rounds.truth;
    const totals = this.sim.nodeContention();
    if (!truth || !totals || !this.lastTotals) return;
    const r = this.rounds.time.length - 1;
    if (r >= 0) {
      this.nodes.forEach((node, i) => {
        const now = totals.get(node)!;
        const before = this.lastTotals!.get(node)!;
        truth.cpuStall[i]![r] = now.cpuStallSeconds - before.cpuStallSeconds;
        truth.memStall[i]![r] = now.memStallSeconds - before.memStallSeconds;
        truth.migrationStall[i]![r] = now.migrationStallSeconds - before.migrationStallSeconds;
      });
    }
    this.lastTotals = totals;
  }

  /** Notes the members of successful motions that now run on their target. */
  private land(time: number): void {
    if (this.landing.length === 0) return;
    this.landing = this.landing.filter((m) => {
      let waiting = false;
      m.resources.forEach((sid, k) => {
        if (m.landedAt![k] !== null) return;
        const at = this.sim.guestPlacement(sid);
        if (at?.node === m.target && at.running) m.landedAt![k] = time;
        else if (at?.node === m.target) waiting = true; // not started yet
      });
      return waiting;
    });
  }

  private event(e: BalancerEvent): void {
    if (e.type === 'move') {
      this.motions.push({
        time: e.time,
        resources: [...e.resources],
        source: e.source,
        target: e.target,
        ok: null,
        outcomeAt: null,
        landedAt: e.resources.map(() => null),
      });
      return;
    }
    // the oldest motion of this bundle and target still waiting for its outcome
    const key = e.resources.join(' ');
    const m = this.motions.find((x) => x.ok === null && x.target === e.target && x.resources.join(' ') === key);
    if (!m) return;
    m.ok = e.ok;
    m.outcomeAt = e.time;
    if (e.detail !== undefined) m.detail = e.detail;
    if (e.ok) this.landing.push(m);
  }

  /** The motions as resource moves (a bundle of k is k moves), in issue order. */
  resourceMoves(): ResourceMove[] {
    return resourceMoves(this.motions);
  }

  /** The run's summary (see {@link summarizeRun}); `thresholds`: the pressure levels, percent. */
  summary(thresholds: PressureThresholds = PRESSURE_THRESHOLDS): RunSummary {
    return summarizeRun(
      { nodes: this.nodes, rounds: this.rounds, moves: resourceMoves(this.motions), endTime: this.end },
      thresholds,
    );
  }
}

/** Balancer motions as resource moves: each member of a bundle, in the bundle's order, motions in order. */
export function resourceMoves(motions: readonly RecordedMotion[]): ResourceMove[] {
  const out: ResourceMove[] = [];
  for (const m of motions) {
    for (const [k, sid] of m.resources.entries()) {
      const landedAt = m.landedAt?.[k];
      out.push({
        time: m.time,
        sid,
        source: m.source,
        target: m.target,
        ok: m.ok,
        outcomeAt: m.outcomeAt,
        ...(m.detail === undefined ? {} : { detail: m.detail }),
        ...(landedAt === undefined ? {} : { landedAt }),
      });
    }
  }
  return out;
}

/**
 * The summary of a recorded run: the one definition behind `poise-sim summary`,
 * {@link RunRecorder.summary} and the lab's reports (see the package README, *Summary*, for why
 * each field is defined so). Pure; O(samples × nodes + moves).
 */
export function summarizeRun(run: RunRecord, thresholds: PressureThresholds = PRESSURE_THRESHOLDS): RunSummary {
  let failed = 0;
  const bySid = new Map<string, number>();
  for (const m of run.moves) {
    if (m.ok === false) failed++;
    bySid.set(m.sid, (bySid.get(m.sid) ?? 0) + 1);
  }
  const movesBySid = Object.create(null) as Record<string, number>;
  for (const sid of [...bySid.keys()].sort(compareNames)) movesBySid[sid] = bySid.get(sid)!;
  return {
    guestContentionSeconds: run.rounds.truth ? guestContentionSeconds(run.rounds.truth) : null,
    migrationSeconds: run.rounds.truth ? migrationSeconds(run.rounds.truth) : null,
    moves: run.moves.length,
    failedMoves: failed,
    movesBySid,
    pingPongs: countPingPongs(run.moves),
    imbalanceTimeWeighted: timeWeightedMean(run.rounds.time, run.rounds.imbalance, run.endTime),
    pressureSeconds: pressureNodeSeconds(run.rounds, run.endTime, thresholds),
    simSeconds: run.endTime,
  };
}

/**
 * Ping-pongs: successful resource moves to a node the resource left by an earlier successful
 * move at most `window` seconds before, both judged at their issue times (the balancer's
 * decisions; how long a migration takes is the cluster's, not the policy's). Failed, refused
 * and in-flight moves neither leave nor arrive; each return counts once; the latest departure
 * from a node counts. O(moves).
 */
export function countPingPongs(moves: readonly ResourceMove[], window = PING_PONG_WINDOW_SECONDS): number {
  const left = new Map<string, Map<string, number>>();
  let count = 0;
  for (const m of moves) {
    if (m.ok !== true) continue;
    let bySid = left.get(m.sid);
    if (!bySid) left.set(m.sid, (bySid = new Map<string, number>()));
    const t = bySid.get(m.target);
    if (t !== undefined && m.time - t <= window) count++;
    bySid.set(m.source, m.time);
  }
  return count;
}

/** Time-weighted mean of a step function (`values[r]` holds from `times[r]` to the next time, the last to `end`); null without samples or elapsed time. */
export function timeWeightedMean(times: readonly number[], values: readonly number[], end: number): number | null {
  const n = times.length;
  if (n === 0 || !(end - times[0]! > 0)) return null;
  let acc = 0;
  for (let r = 0; r < n; r++) acc += values[r]! * ((r + 1 < n ? times[r + 1]! : end) - times[r]!);
  return acc / (end - times[0]!);
}

/**
 * Node-seconds under pressure: for each sample, its duration (until the next sample, the last
 * until `end`) × the online nodes whose cpu PSI reaches `thresholds.cpu` or memory PSI reaches
 * `thresholds.mem` (an unreported value is no pressure). `null` when no node ever reported
 * pressure (no telemetry: not the same as none). Offline nodes do not count: a powered-off
 * node's last reported value means nothing.
 */
export function pressureNodeSeconds(
  rounds: RunRecord['rounds'],
  end: number,
  thresholds: PressureThresholds = PRESSURE_THRESHOLDS,
): number | null {
  let reported = false;
  let acc = 0;
  const n = rounds.time.length;
  for (let r = 0; r < n; r++) {
    let under = 0;
    for (let i = 0; i < rounds.online.length; i++) {
      const c = rounds.pressureCpu[i]![r];
      const m = rounds.pressureMem[i]![r];
      if (c != null || m != null) reported = true;
      if (rounds.online[i]![r] && ((c != null && c >= thresholds.cpu) || (m != null && m >= thresholds.mem))) under++;
    }
    if (under > 0) acc += under * ((r + 1 < n ? rounds.time[r + 1]! : end) - rounds.time[r]!);
  }
  return reported ? acc : null;
}

/** Guest contention-seconds of a run's ground truth: every node's cpu, memory and migration stall, summed over the samples. */
function guestContentionSeconds(truth: TruthColumns): number {
  let acc = 0;
  for (const col of [truth.cpuStall, truth.memStall, truth.migrationStall])
    for (const node of col) for (const v of node) acc += v;
  return acc;
}

/** The part of a run's guest contention-seconds migrations caused: every node's migration stall, summed over the samples. */
function migrationSeconds(truth: TruthColumns): number {
  let acc = 0;
  for (const node of truth.migrationStall) for (const v of node) acc += v;
  return acc;
}

/**
 * Guest contention per sample, as a rate: the guest-seconds of stall (every node, cpu, memory
 * and migration) accrued from sample r to the next (the last: to `end`) divided by that
 * interval's length; "guests stalled on average" while the sample held. 0 for an empty interval.
 */
export function contentionRate(time: readonly number[], truth: TruthColumns, end: number): number[] {
  return time.map((t, r) => {
    const dt = (r + 1 < time.length ? time[r + 1]! : end) - t;
    let acc = 0;
    for (const col of [truth.cpuStall, truth.memStall, truth.migrationStall]) for (const node of col) acc += node[r]!;
    return dt > 0 ? acc / dt : 0;
  });
}
