import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { performance } from 'node:perf_hooks';
import process from 'node:process';

/** A point in time: wall clock and the process's CPU time (user + system, all threads), ms. */
export interface Stamp {
  readonly wall: number;
  readonly cpu: number;
}

export function stamp(): Stamp {
  const c = process.cpuUsage();
  return { wall: performance.now(), cpu: (c.user + c.system) / 1000 };
}

/** Wall and CPU ms since `start`. */
export function since(start: Stamp): Stamp {
  const now = stamp();
  return { wall: now.wall - start.wall, cpu: now.cpu - start.cpu };
}

/** Where GNU time is; without it a child's CPU time is not measured. */
const TIME = '/usr/bin/time';

/** A child process's run: its wall time, its CPU time (user + system) where GNU time is installed, its stdout. */
export interface TimedRun {
  readonly wallMs: number;
  readonly cpuS: number | undefined;
  readonly stdout: string;
}

/** Runs `command` (program and arguments) in `cwd`, timed; throws naming it if it fails. */
export function timedProcess(command: readonly string[], cwd: string): TimedRun {
  const timed = existsSync(TIME);
  const start = performance.now();
  const r = spawnSync(timed ? TIME : command[0]!, timed ? ['-f', 'cpu %U %S', ...command] : command.slice(1), {
    cwd,
    encoding: 'utf8',
    maxBuffer: 1 << 28,
  });
  const wallMs = performance.now() - start;
  if (r.status !== 0) throw new Error(`${command.join(' ')} in ${cwd} failed (${r.status}): ${r.stderr}`);
  const m = /cpu ([\d.]+) ([\d.]+)\s*$/.exec(r.stderr);
  return { wallMs, cpuS: m ? Number(m[1]) + Number(m[2]) : undefined, stdout: r.stdout };
}

/** The median of a non-empty list (the upper one of an even count). */
export const median = (xs: readonly number[]): number => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
