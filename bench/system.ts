/**
 * Whole-system benchmarks: `@poise/sim` running the HA core (`@poise/ha`, `@poise/usage`) on a
 * workload, in process. A manager round is timed by wrapping `Manager.prototype.manage` (the
 * benchmark's own instrumentation; the packages carry none). Runs are warm: one throw-away run of
 * the same workload first.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { Session } from 'node:inspector';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import process from 'node:process';
import { Manager } from '../packages/ha/src/index';
import { Simulation, loadCase } from '../packages/sim/src/index';
import { type Stamp, since, stamp } from './clock';
import { gc } from './kernels';
import { PUBLISHED_FIRST_ROUND_MS, type ProfileSection, type SystemRow, summary } from './schema';
import { writeDynamicCase, writeSeed3Case } from './sim-case';

const HOUR_ROUNDS = 180;

/** Manager rounds of the current run (filled by the wrapped `manage`). */
let managerRounds: Stamp[] = [];
// eslint-disable-next-line @typescript-eslint/unbound-method -- the original, called with the manager as `this` below
const manage = Manager.prototype.manage;
Manager.prototype.manage = function timedManage(this: Manager): void {
  const t0 = stamp();
  manage.call(this);
  managerRounds.push(since(t0));
};

interface Run {
  time: Stamp;
  rounds: number;
  manager: Stamp[];
  sim: Simulation;
}

/** Loads the case and steps `rounds` rounds (or to its end); throws if the run aborted. */
function run(dir: string, rounds?: number): Run {
  managerRounds = [];
  const t0 = stamp();
  const sim = new Simulation(loadCase(dir), { profile: 'pve-9.2', maxTimeSeconds: Infinity });
  let steps = 0;
  while (rounds === undefined || steps < rounds) {
    steps++;
    if (!sim.step()) break;
  }
  const time = since(t0);
  if (sim.error !== undefined) throw new Error(`${dir}: the simulation aborted: ${sim.error}`);
  if (rounds !== undefined && steps !== rounds) throw new Error(`${dir}: ended after ${steps} of ${rounds} rounds`);
  return { time, rounds: steps, manager: managerRounds, sim };
}

export interface SystemWorkload {
  workload: SystemRow['workload'];
  nodes: number;
  services: number;
}

/** Writes the workload's case (its own run) and its hour case into a temporary directory. */
function writeCases(w: SystemWorkload, root: string): { caseDir: string; hourDir: string } {
  const caseDir = join(root, 'case');
  const hourDir = join(root, 'hour');
  if (w.workload === 'seed-003') {
    writeSeed3Case(caseDir, w.services, w.nodes);
    writeSeed3Case(hourDir, w.services, w.nodes, HOUR_ROUNDS * 20);
  } else {
    writeDynamicCase(caseDir, w.services, w.nodes);
    writeDynamicCase(hourDir, w.services, w.nodes, HOUR_ROUNDS * 20);
  }
  return { caseDir, hourDir };
}

export function systemRow(w: SystemWorkload, reps: number, hourReps: number): SystemRow {
  const root = mkdtempSync(join(tmpdir(), 'poise-bench-'));
  try {
    const { caseDir, hourDir } = writeCases(w, root);
    run(caseDir); // warm-up (throw-away)
    const firsts: Stamp[] = [];
    const laters: Stamp[] = [];
    let laterMax = 0;
    const runs: Stamp[] = [];
    let rounds = 0;
    let roundModel: SystemRow['roundModel'] = 'reference';
    for (let rep = 0; rep < reps; rep++) {
      const r = run(caseDir);
      runs.push(r.time);
      rounds = r.rounds;
      roundModel = r.sim.roundModel;
      firsts.push(r.manager[0]!);
      const later = r.manager.slice(1);
      laters.push({ wall: summary(later.map((t) => t.wall)).median, cpu: summary(later.map((t) => t.cpu)).median });
      laterMax = Math.max(laterMax, ...later.map((t) => t.wall));
    }
    const hours: Stamp[] = [];
    let bytesPerService = 0;
    for (let rep = 0; rep < hourReps; rep++) {
      gc();
      const before = process.memoryUsage().heapUsed;
      const r = run(hourDir, HOUR_ROUNDS);
      hours.push(r.time);
      if (r.sim.time !== HOUR_ROUNDS * 20) throw new Error(`hour run ended at ${r.sim.time} s`);
      gc();
      bytesPerService = Math.max(bytesPerService, (process.memoryUsage().heapUsed - before) / w.services);
      if (r.sim.view().services.size !== w.services) throw new Error('hour run: services lost');
    }
    return {
      workload: w.workload,
      nodes: w.nodes,
      services: w.services,
      mode: w.workload === 'seed-003' ? 'static' : 'dynamic',
      roundModel,
      firstRoundMs: summary(firsts.map((t) => t.wall)),
      firstRoundCpuMs: summary(firsts.map((t) => t.cpu)),
      laterRoundMs: summary(laters.map((t) => t.wall)),
      laterRoundCpuMs: summary(laters.map((t) => t.cpu)),
      laterRoundMaxMs: laterMax,
      rounds,
      runMs: summary(runs.map((t) => t.wall)),
      runCpuMs: summary(runs.map((t) => t.cpu)),
      hourMs: summary(hours.map((t) => t.wall)),
      hourCpuMs: summary(hours.map((t) => t.cpu)),
      bytesPerService,
      publishedFirstRoundMs:
        w.workload === 'seed-003' && w.nodes === 3 ? (PUBLISHED_FIRST_ROUND_MS[w.services] ?? null) : null,
    };
  } finally {
    rmSync(root, { recursive: true, force: true });
  }
}

// ---- CPU profile (the profiler `node --cpu-prof` uses, in process) ----

interface CpuProfile {
  nodes: { id: number; callFrame: { functionName: string; url: string }; children?: number[] }[];
  samples: number[];
  timeDeltas: number[];
}

function post<T>(session: Session, method: string, params?: object): Promise<T> {
  return new Promise((resolve, reject) =>
    session.post(method, params ?? {}, (err, result) => (err ? reject(err) : resolve(result as T))),
  );
}

const REPO = join(import.meta.dirname, '..');

function fileOf(url: string): string {
  if (url === '') return '(V8)';
  const path = url.startsWith('file://') ? new URL(url).pathname : url;
  return path.startsWith(REPO) ? relative(REPO, path) : path.replace(/^.*node_modules\//, '');
}

/** Profiles a warm run of the workload (its case, or `rounds` rounds of the hour) and names the top self-time functions. */
export async function profileRow(
  w: SystemWorkload,
  label: string,
  rounds: number | undefined,
  top = 10,
): Promise<ProfileSection> {
  const root = mkdtempSync(join(tmpdir(), 'poise-bench-'));
  const session = new Session();
  session.connect();
  try {
    const { caseDir, hourDir } = writeCases(w, root);
    const dir = rounds === undefined ? caseDir : hourDir;
    run(dir, rounds); // warm-up
    gc();
    await post(session, 'Profiler.enable');
    await post(session, 'Profiler.setSamplingInterval', { interval: 250 });
    await post(session, 'Profiler.start');
    run(dir, rounds);
    const { profile } = await post<{ profile: CpuProfile }>(session, 'Profiler.stop');
    const self = new Map<string, number>();
    const byId = new Map(profile.nodes.map((n) => [n.id, n]));
    let total = 0;
    for (let i = 0; i < profile.samples.length; i++) {
      const n = byId.get(profile.samples[i]!)!;
      const dt = profile.timeDeltas[i] ?? 0;
      total += dt;
      if (n.callFrame.functionName === '(program)' || n.callFrame.functionName === '(idle)') continue;
      const key = `${n.callFrame.functionName || '(anonymous)'}\u0000${fileOf(n.callFrame.url)}`;
      self.set(key, (self.get(key) ?? 0) + dt);
    }
    return {
      workload: label,
      totalMs: total / 1000,
      top: [...self]
        .sort((a, b) => b[1] - a[1])
        .slice(0, top)
        .map(([key, t]) => {
          const [fn, file] = key.split('\u0000') as [string, string];
          return { fn, file, selfPercent: (100 * t) / total };
        }),
    };
  } finally {
    await post(session, 'Profiler.disable').catch(() => undefined);
    session.disconnect();
    rmSync(root, { recursive: true, force: true });
  }
}
