/**
 * The simulator-backed `runOne` of the lab, on what `@poise/sim` offers today: `loadCase`,
 * `Simulation` (its `onRound` listener samples the measured node stats after every round) and
 * its log lines (moves are read from the balancer's lines). The crs/seed handling moves to
 * issue 8's `--set` and `sim_options` once they land.
 *
 * Limits of today's simulator: only the reference `crs` keys ({@link SUPPORTED_CRS_KEYS}), no
 * noise (every seed gives the same run), no pressure telemetry, at most 29 nodes and 10,000 s.
 */
import { loadCase, Simulation } from '@poise/sim';
import { normalizedImbalance } from '@poise/imbalance';
import { LabError } from './errors';
import type { ScenarioRef } from './runner';
import { TRACE_FORMAT, type RunTrace, type TraceMove } from './trace';
import type { Variant } from './variants';

/** The `crs` keys today's simulator implements (the reference's, spec §3.6). */
export const SUPPORTED_CRS_KEYS: readonly string[] = [
  'ha',
  'ha-rebalance-on-start',
  'ha-auto-rebalance',
  'ha-auto-rebalance-threshold',
  'ha-auto-rebalance-method',
  'ha-auto-rebalance-hold-duration',
  'ha-auto-rebalance-margin',
];

/** Throws {@link LabError} `bad-variants` for a key the simulator would silently ignore. */
export function checkVariantSupported(variant: Variant): void {
  for (const key of Object.keys(variant.crs)) {
    if (!SUPPORTED_CRS_KEYS.includes(key)) {
      throw new LabError(
        'bad-variants',
        `variant '${variant.name}': crs key '${key}' is not implemented by the simulator yet (it runs: ${SUPPORTED_CRS_KEYS.join(', ')})`,
      );
    }
  }
}

const LINE = /^(\S+)\s+(\d+)\s+(\S+): (.*)$/;
const ISSUE = /^auto rebalance - (?:migrate|relocate) ((?:vm|ct|fa):\d+) to (\S+) \(/;
const PARTNER = /^crm command '[^']*' - (?:migrate|relocate) service '((?:vm|ct|fa):\d+)' to node '([^']+)' \(service '[^']+' in positive affinity/;
const REFUSED = /^crm command '(?:migrate|relocate) ((?:vm|ct|fa):\d+) (\S+)' error - /;
const STATE = /^service '((?:vm|ct|fa):\d+)': state changed from '(migrate|relocate)' to '([^']+)'(?:\s+\(node = ([^,)]+)(?:, target = [^)]+)?\))?/;

/** Runs one scenario under one variant with today's simulator (`pve-9.2` profile) and returns its trace. */
export function runOne(scenario: ScenarioRef, variant: Variant, seed: number): RunTrace {
  checkVariantSupported(variant);
  const input = loadCase(scenario.dir, scenario.name);
  input.datacenterCfg = { ...input.datacenterCfg, crs: { ...input.datacenterCfg.crs, ...variant.crs } as typeof input.datacenterCfg.crs };

  const nodes = Object.keys(input.hardwareStatus).sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
  const time: number[] = [];
  const imbalance: number[] = [];
  const cpu: number[][] = nodes.map(() => []);
  const mem: number[][] = nodes.map(() => []);
  const moves: TraceMove[] = [];
  const inFlight = new Map<string, TraceMove>();
  let lastIssue: TraceMove[] = [];

  let sim: Simulation | undefined;
  const nodeOf = (sid: string): string | undefined => sim?.view().services.get(sid)?.node;
  const onLine = (line: string) => {
    const m = LINE.exec(line.replace(/\n$/, ''));
    if (!m || !m[3]!.endsWith('/crm')) return;
    const t = Number(m[2]);
    const msg = m[4]!;
    let x: RegExpExecArray | null;
    if ((x = ISSUE.exec(msg))) {
      const mv: TraceMove = { time: t, sid: x[1]!, source: nodeOf(x[1]!) ?? '?', target: x[2]!, ok: null };
      moves.push(mv);
      inFlight.set(mv.sid, mv);
      lastIssue = [mv];
    } else if ((x = PARTNER.exec(msg)) && lastIssue.length > 0 && lastIssue[0]!.time === t) {
      const mv: TraceMove = { time: t, sid: x[1]!, source: nodeOf(x[1]!) ?? '?', target: x[2]!, ok: null };
      moves.push(mv);
      inFlight.set(mv.sid, mv);
      lastIssue.push(mv);
    } else if ((x = REFUSED.exec(msg)) && lastIssue.length > 0 && lastIssue[0]!.time === t && lastIssue[0]!.sid === x[1]) {
      for (const mv of lastIssue) {
        mv.ok = false;
        inFlight.delete(mv.sid);
      }
      lastIssue = [];
    } else if ((x = STATE.exec(msg))) {
      const mv = inFlight.get(x[1]!);
      if (mv) {
        mv.ok = x[4] === mv.target;
        inFlight.delete(mv.sid);
      }
    }
  };
  sim = new Simulation(input, { profile: 'pve-9.2', sink: onLine });
  // one sample per round, after the round and its command slot: the measured node stats the
  // next round's daemons read
  sim.onRound(({ time: t, ended }) => {
    if (ended) return; // the end time closes the last sample; nothing runs after it
    const view = sim!.view();
    const loads: number[] = [];
    nodes.forEach((n, i) => {
      const st = view.nodeStats.get(n)!;
      const c = st.cpu / st.maxcpu;
      const m = st.mem / st.maxmem;
      cpu[i]!.push(c);
      mem[i]!.push(m);
      if (view.nodes.get(n)?.online) loads.push((c + m) / 2);
    });
    time.push(t);
    imbalance.push(normalizedImbalance(loads));
  });
  const result = sim.run();
  if (result.error !== undefined) {
    throw new LabError('run-failed', `the simulator stopped at ${sim.time} s: ${result.error}`);
  }
  for (const mv of moves) {
    if (mv.source === '?' || !nodes.includes(mv.source)) throw new LabError('run-failed', `cannot tell where '${mv.sid}' was moved from at ${mv.time} s`);
  }
  return {
    format: TRACE_FORMAT,
    scenario: scenario.name,
    variant: variant.name,
    seed,
    endTime: sim.time,
    nodes,
    rounds: { time, imbalance, cpu, mem },
    moves,
  };
}
