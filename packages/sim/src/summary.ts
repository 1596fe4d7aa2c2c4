import type { BalancerEvent } from '@poise/ha';
import { normalizedImbalance } from '@poise/imbalance';
import { nodeLoad } from '@poise/usage';
import type { Simulation } from './simulation';

/** A resource moved back to a node it left at most this many seconds earlier is a ping-pong (30 min). */
export const PING_PONG_WINDOW_SECONDS = 1800;
/** A node counts as under pressure while its cpu or memory PSI "some" avg10 reaches this (percent). */
export const PRESSURE_THRESHOLD_PERCENT = 10;

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
}

/** The summary of one run: what `poise-sim summary` prints (keys in this order). */
export interface RunSummary {
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
  /** Seconds during which at least one online node's cpu or memory pressure was at or above 10 %; `null` when no node ever reported pressure. */
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
  readonly rounds: RecordedRounds = { time: [], imbalance: [], cpu: [], mem: [], pressureCpu: [], pressureMem: [], online: [] };
  /** Balancer motions in issue order. */
  readonly motions: RecordedMotion[] = [];
  private end: number;
  private readonly unsubscribe: Array<() => void>;

  constructor(private readonly sim: Simulation) {
    const first = sim.sample();
    this.nodes = [...first.keys()];
    for (let i = 0; i < this.nodes.length; i++) {
      this.rounds.cpu.push([]);
      this.rounds.mem.push([]);
      this.rounds.pressureCpu.push([]);
      this.rounds.pressureMem.push([]);
      this.rounds.online.push([]);
    }
    this.end = sim.time;
    if (!sim.ended) this.take(sim.time);
    this.unsubscribe = [
      sim.onRound((e) => {
        this.end = e.time;
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
      if (s.online) loads.push(nodeLoad(s.cpu, s.maxcpu, s.mem, s.maxmem));
    });
    r.time.push(time);
    r.imbalance.push(normalizedImbalance(loads));
  }

  private event(e: BalancerEvent): void {
    if (e.type === 'move') {
      this.motions.push({ time: e.time, resources: [...e.resources], source: e.source, target: e.target, ok: null, outcomeAt: null });
      return;
    }
    // the oldest motion of this bundle and target still waiting for its outcome
    const key = e.resources.join(' ');
    const m = this.motions.find((x) => x.ok === null && x.target === e.target && x.resources.join(' ') === key);
    if (!m) return;
    m.ok = e.ok;
    m.outcomeAt = e.time;
    if (e.detail !== undefined) m.detail = e.detail;
  }

  /** The run's summary (see {@link RunSummary}); `threshold` is the pressure level in percent. */
  summary(threshold = PRESSURE_THRESHOLD_PERCENT): RunSummary {
    let moves = 0;
    let failed = 0;
    const bySid = new Map<string, number>();
    for (const m of this.motions) {
      moves += m.resources.length;
      if (m.ok === false) failed += m.resources.length;
      for (const sid of m.resources) bySid.set(sid, (bySid.get(sid) ?? 0) + 1);
    }
    const movesBySid = Object.create(null) as Record<string, number>;
    for (const sid of [...bySid.keys()].sort(byteOrder)) movesBySid[sid] = bySid.get(sid)!;
    return {
      moves,
      failedMoves: failed,
      movesBySid,
      pingPongs: countPingPongs(this.motions),
      imbalanceTimeWeighted: timeWeightedMean(this.rounds.time, this.rounds.imbalance, this.end),
      pressureSeconds: pressureSeconds(this.rounds, this.end, threshold),
      simSeconds: this.end,
    };
  }
}

function byteOrder(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

/**
 * Ping-pongs: successful resource motions to a node the resource left by an earlier
 * successful motion at most `window` seconds before (issue times). Failed, refused and
 * in-flight motions neither leave nor arrive. O(motions × members).
 */
export function countPingPongs(motions: readonly RecordedMotion[], window = PING_PONG_WINDOW_SECONDS): number {
  const left = new Map<string, Map<string, number>>();
  let count = 0;
  for (const m of motions) {
    if (m.ok !== true) continue;
    for (const sid of m.resources) {
      let bySid = left.get(sid);
      if (!bySid) left.set(sid, (bySid = new Map()));
      const t = bySid.get(m.target);
      if (t !== undefined && m.time - t <= window) count++;
      bySid.set(m.source, m.time);
    }
  }
  return count;
}

/** Time-weighted mean of a step function (`values[r]` holds from `times[r]` to the next time, the last to `end`); null without elapsed time. */
export function timeWeightedMean(times: readonly number[], values: readonly number[], end: number): number | null {
  const n = times.length;
  if (n === 0 || !(end - times[0]! > 0)) return null;
  let acc = 0;
  for (let r = 0; r < n; r++) acc += values[r]! * ((r + 1 < n ? times[r + 1]! : end) - times[r]!);
  return acc / (end - times[0]!);
}

/** Seconds with at least one online node at or above `threshold` (cpu or memory); null when no node ever reported pressure. */
function pressureSeconds(rounds: RecordedRounds, end: number, threshold: number): number | null {
  let reported = false;
  let acc = 0;
  const n = rounds.time.length;
  for (let r = 0; r < n; r++) {
    let under = false;
    for (let i = 0; i < rounds.online.length; i++) {
      const c = rounds.pressureCpu[i]![r];
      const m = rounds.pressureMem[i]![r];
      if (c != null || m != null) reported = true;
      if (rounds.online[i]![r] && ((c != null && c >= threshold) || (m != null && m >= threshold))) under = true;
    }
    if (under) acc += (r + 1 < n ? rounds.time[r + 1]! : end) - rounds.time[r]!;
  }
  return reported ? acc : null;
}
