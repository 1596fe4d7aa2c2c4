/**
 * The start-scoring kernel in C (`native/start-score.c`: the same incremental algorithm, the same
 * float operations in the same order), compiled here with `$CC` (default `cc`) and
 * `-O2 -ffp-contract=off`, run on the same inputs as the TypeScript kernel. Each run prints the
 * decisions it made, a hash of every score it computed and its timings; `start-score.ts` checks
 * the decisions and the hash against the TypeScript kernel's before reporting a figure. Without a
 * working compiler the comparison is skipped with a note on stderr and the C column stays empty
 * (never in tests: nothing here runs outside `pnpm bench`).
 */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import process from 'node:process';
import type { NodeStats, ResourceStats } from '../packages/usage/src/index';

const SOURCE = join(import.meta.dirname, 'native', 'start-score.c');
/** No fused multiply-add: the TypeScript kernel rounds every product and every sum. */
export const NATIVE_FLAGS = ['-O2', '-ffp-contract=off'] as const;

export interface NativeStartKernel {
  readonly binary: string;
  /** The compiler's `--version` first line and the flags, for the README. */
  readonly compiler: string;
}

let compiled: NativeStartKernel | null | undefined;

/** Why the C side is skipped, once, on stderr. */
function skip(why: string): null {
  process.stderr.write(`${why}: the comparison with the start-scoring kernel in C is skipped\n`);
  return null;
}

/**
 * Compiles the C kernel once per process with `$CC` (default `cc`); null, with a note on stderr,
 * when there is no such compiler or it cannot build the kernel.
 */
export function nativeStartKernel(): NativeStartKernel | null {
  if (compiled !== undefined) return compiled;
  const fromEnv = process.env.CC?.trim();
  const cc = fromEnv || 'cc';
  const version = spawnSync(cc, ['--version'], { encoding: 'utf8' });
  if (version.error !== undefined || version.status !== 0) {
    compiled = skip(`no C compiler ('${cc}'${fromEnv ? ', from $CC,' : ''} did not run)`);
    return compiled;
  }
  const dir = mkdtempSync(join(tmpdir(), 'poise-bench-'));
  process.once('exit', () => rmSync(dir, { recursive: true, force: true }));
  const binary = join(dir, 'start-score');
  const build = spawnSync(cc, [...NATIVE_FLAGS, '-o', binary, SOURCE, '-lm'], { encoding: 'utf8' });
  if (build.error !== undefined || build.status !== 0) {
    compiled = skip(`${cc} ${NATIVE_FLAGS.join(' ')} ${SOURCE} failed:\n${build.error?.message ?? build.stderr}`);
    return compiled;
  }
  compiled = { binary, compiler: `${version.stdout.split('\n')[0]!.trim()}, ${NATIVE_FLAGS.join(' ')}` };
  return compiled;
}

/** What one run of the C kernel reports. */
export interface NativeStartRun {
  /** The node index each decision chose. */
  readonly decisions: readonly number[];
  /** FNV-1a (64 bits, hex) over every score's bit pattern, decision by decision, node by node. */
  readonly scoreHash: string;
  /** Per repetition: µs per score, wall clock and process CPU. */
  readonly scoreUs: readonly number[];
  readonly scoreCpuUs: readonly number[];
}

/** What the C kernel is asked to do (nodes in byte order of their names). */
export interface NativeStartWork {
  readonly nodes: readonly NodeStats[];
  readonly guest: ResourceStats;
  /** Placements of `guest` from the nodes' base stats, every score hashed. */
  readonly decisions: number;
  /** Then per timed batch: nodes carrying this many guests placed round-robin ... */
  readonly guests: number;
  /** ... scored this many times (after one untimed batch). */
  readonly calls: number;
  readonly reps: number;
}

/** Runs the C kernel on `work`, in a process of its own. */
export function runNativeStart(kernel: NativeStartKernel, work: NativeStartWork): NativeStartRun {
  const stats = (s: NodeStats | ResourceStats) => `${s.cpu} ${s.maxcpu} ${s.mem} ${s.maxmem}`;
  const input = [
    String(work.nodes.length),
    ...work.nodes.map(stats),
    stats(work.guest),
    `${work.decisions} ${work.guests} ${work.calls} ${work.reps}`,
    '',
  ].join('\n');
  const run = spawnSync(kernel.binary, [], { input, encoding: 'utf8', maxBuffer: 64 * 1024 * 1024 });
  if (run.status !== 0)
    throw new Error(`${kernel.binary} exited with ${String(run.status ?? run.signal)}: ${run.stderr}`);
  const fields = new Map(
    run.stdout
      .trim()
      .split('\n')
      .map((line) => {
        const [key, ...values] = line.trim().split(/\s+/);
        return [key!, values] as const;
      }),
  );
  const field = (key: string) => {
    const values = fields.get(key);
    if (values === undefined) throw new Error(`${kernel.binary}: no '${key}' line in its output`);
    return values;
  };
  const numbers = (key: string) => field(key).map(Number);
  return {
    decisions: numbers('decisions'),
    scoreHash: field('score-hash')[0] ?? '',
    scoreUs: numbers('score-us'),
    scoreCpuUs: numbers('score-cpu-us'),
  };
}

const FNV_OFFSET = 0xcbf29ce484222325n;
const FNV_PRIME = 0x100000001b3n;
const WORD = new Float64Array(1);
const WORD_BYTES = new Uint8Array(WORD.buffer);
const LITTLE_ENDIAN = new Uint8Array(new Uint16Array([1]).buffer)[0] === 1;

/** FNV-1a (64 bits) over the little-endian bytes of each value's bit pattern, as the C kernel hashes its scores. */
export class ScoreHash {
  private h = FNV_OFFSET;

  add(x: number): void {
    WORD[0] = x;
    for (let i = 0; i < 8; i++) {
      this.h = ((this.h ^ BigInt(WORD_BYTES[LITTLE_ENDIAN ? i : 7 - i]!)) * FNV_PRIME) & 0xffffffffffffffffn;
    }
  }

  hex(): string {
    return this.h.toString(16).padStart(16, '0');
  }
}
