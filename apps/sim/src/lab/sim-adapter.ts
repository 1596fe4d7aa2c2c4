/**
 * The simulator-backed `runOne` of the lab, on what `@poise/sim` offers today: `loadCase`, the
 * exported `Hardware` (run as `simulate` runs it) and its log lines. Per round it samples the
 * measured node stats; moves are read from the balancer's log lines. Replace the sampling hook
 * with `Simulation`'s `onRound` and the crs/seed handling with issue 8's `--set` and
 * `sim_options` once they land.
 *
 * Limits of today's simulator: only the reference `crs` keys ({@link SUPPORTED_CRS_KEYS}), no
 * noise (every seed gives the same run), no pressure telemetry, at most 29 nodes and 10,000 s.
 */
import { loadCase, Hardware } from '@poise/sim';
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
  const loopTime = Math.max(20, 2 * nodes.length);
  const time: number[] = [];
  const imbalance: number[] = [];
  const cpu: number[][] = nodes.map(() => []);
  const mem: number[][] = nodes.map(() => []);
  const moves: TraceMove[] = [];
  const inFlight = new Map<string, TraceMove>();
  let lastRound = -1;
  let lastIssue: TraceMove[] = [];

  // one sample per round, at the first daemon iteration of the round (commands of the previous
  // round's end have run; daemons read the node info at the start of each iteration)
  class TracedHardware extends Hardware {
    override getNodeInfo(): ReturnType<Hardware['getNodeInfo']> {
      const info = super.getNodeInfo();
      const round = Math.floor(this.curTime / loopTime);
      if (round > lastRound) {
        lastRound = round;
        const stats = this.getDynamicNodeStats();
        const loads: number[] = [];
        nodes.forEach((n, i) => {
          const s = stats[n]!;
          const c = s.cpu / s.maxcpu;
          const m = s.mem / s.maxmem;
          cpu[i]!.push(c);
          mem[i]!.push(m);
          if (info.nodeInfo[n]?.online) loads.push((c + m) / 2);
        });
        time.push(round * loopTime);
        imbalance.push(normalizedImbalance(loads));
      }
      return info;
    }
  }

  let hw: TracedHardware | undefined;
  const nodeOf = (sid: string): string | undefined => {
    const conf = hw!.readServiceConfig() as unknown as Record<string, { node?: string }>;
    return conf[sid]?.node;
  };
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
  hw = new TracedHardware(input, { profile: 'pve-9.2' }, onLine);
  hw.hwLog('info', 'starting simulation');
  try {
    hw.run(input.cmdlist);
  } catch (err) {
    throw new LabError('run-failed', `the simulator stopped at ${hw.curTime} s: ${(err as Error).message}`, { cause: err });
  }
  for (const mv of moves) {
    if (mv.source === '?' || !nodes.includes(mv.source)) throw new LabError('run-failed', `cannot tell where '${mv.sid}' was moved from at ${mv.time} s`);
  }
  return {
    format: TRACE_FORMAT,
    scenario: scenario.name,
    variant: variant.name,
    seed,
    endTime: hw.curTime,
    nodes,
    rounds: { time, imbalance, cpu, mem },
    moves,
  };
}
