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
