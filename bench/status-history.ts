/**
 * The memory of the status page's journal (`apps/manager/src/runtime/journal.ts`): a day of
 * rounds of a 9,000-guest cluster, at the default interval (10 s: 8,641 rounds) and at the
 * bound (17,280 rounds, a day at 5 s, or less than a day at shorter intervals), with the
 * decision log's lines, node pressure on every node, a full motion log and the last read's
 * snapshot (the journal keeps one). The JS heap plus the typed arrays' buffers, measured after
 * a full GC, before and after.
 *
 *   pnpm tsx --conditions=poise-source --expose-gc bench/status-history.ts
 *
 * Prints a table; never a test.
 */
import process from 'node:process';
import { buildUsageModel } from '../apps/manager/src/balancing/model';
import type { ClusterSnapshot } from '../apps/manager/src/cluster/port';
import { historyCapacity, Journal, type NodeNow } from '../apps/manager/src/runtime/journal';
import { nodesNow } from '../apps/manager/src/runtime/round';
import { GIB, haGuest, motionRecord, node, snapshot, T0 } from '../apps/manager/src/testing/support';

const GUESTS = 9000;

/** The JS heap plus the typed arrays' backing stores (outside the heap: `arrayBuffers`). */
function used(): number {
  const m = process.memoryUsage();
  return m.heapUsed + m.arrayBuffers;
}

function gc(): void {
  const collect = (globalThis as { gc?: () => void }).gc;
  if (!collect) throw new Error('run with --expose-gc');
  collect();
  collect();
}

/**
 * A cluster of `nodes` nodes (64 cores, 512 GiB, pressure reported) and 9,000 HA VMs spread over
 * them; names `node01`… (or `node1`… with `padded: false`).
 */
export function cluster(nodes: number, padded = true): ClusterSnapshot {
  const names = Array.from({ length: nodes }, (_, i) => `node${padded ? String(i + 1).padStart(2, '0') : i + 1}`);
  return snapshot(
    names.map((n) =>
      node(n, { maxcpu: 64, maxmem: 512 * GIB, cpu: 20, mem: 200 * GIB, pressure: { cpuSome: 3.5, memSome: 0.5 } }),
    ),
    Array.from({ length: GUESTS }, (_, i) =>
      haGuest(`vm:${100 + i}`, names[i % nodes]!, {
        stats: { cpu: 0.2, maxcpu: 2, mem: 2 * GIB, maxmem: 4 * GIB, memhost: undefined },
      }),
    ),
  );
}

/**
 * Rounds `first`..`last` of `snap` into the journal, as a daemon's rounds at `intervalSeconds`
 * would put them: each round's read (loads varying from round to round, with a slow wave and a
 * jitter), its line, its history. `bench/page.ts` fills the daemon it serves with it.
 */
export function fillJournal(
  journal: Journal,
  snap: ClusterSnapshot,
  first: number,
  last: number,
  intervalSeconds: number,
  base: readonly NodeNow[] = nodesNow(snap, buildUsageModel(snap)),
): void {
  for (let r = first; r <= last; r++) {
    // each round's values differ (no sharing between rounds), as measured loads do
    const jitter = (r % 97) / 1000;
    journal.observe({
      round: r,
      time: T0 + r * intervalSeconds,
      quorate: true,
      imbalance: 0.2 + jitter,
      nodes: base.map((n, i) => {
        // a wave per node over the day, so charts and heatmaps have something to show
        const wave = 0.15 * Math.sin((r / 1440) * Math.PI * 2 + i);
        return {
          ...n,
          cpu: (n.cpu ?? 0) + jitter + wave,
          mem: (n.mem ?? 0) - jitter + wave / 2,
          pressureCpu: 3 + jitter,
          pressureMem: 0.5 + jitter,
        };
      }),
      snapshot: snap,
    });
    journal.round(
      {
        round: r,
        outcome: 'skip',
        reason: 'below-threshold',
        // a line of the usual length, a new string each round
        message: `below threshold: smoothed imbalance ${(20 + jitter * 100).toFixed(1)}% ≤ 30.0% (round ${r})`,
        level: 'info',
        fields: { stage: 'threshold-hold', code: 'below-threshold', key: 'threshold-hold:below-threshold' },
      },
      T0 + r * intervalSeconds,
      new Date((T0 + r * intervalSeconds) * 1000).toISOString(),
    );
  }
}

/** 1,000 motions, each succeeded 40 s after its request, a minute apart. */
export function fillMotions(journal: Journal): void {
  for (let i = 0; i < 1000; i++) {
    const m = motionRecord({ sid: `vm:${100 + i}`, issuedAt: T0 + i * 60 });
    journal.motions.requested(m);
    journal.motions.ended(m, 'succeeded', undefined, T0 + i * 60 + 40);
  }
}

function measure(nodes: number, intervalSeconds: number): string[] {
  const snap = cluster(nodes);
  const base = nodesNow(snap, buildUsageModel(snap));
  gc();
  const before = used();
  const journal = new Journal(intervalSeconds);
  const rounds = historyCapacity(intervalSeconds);
  fillJournal(journal, snap, 1, rounds, intervalSeconds, base);
  fillMotions(journal);
  gc();
  const after = used();
  const bytes = after - before;
  // keep the journal alive until measured
  if (journal.history.size < rounds) throw new Error('rounds lost');
  return [
    String(nodes),
    String(GUESTS),
    `${intervalSeconds} s`,
    rounds.toLocaleString('en-US'),
    (bytes / 2 ** 20).toFixed(1),
    Math.round(bytes / rounds).toLocaleString('en-US'),
  ];
}

function main(): void {
  const header = ['nodes', 'guests', 'interval', 'rounds kept', 'memory MiB', 'bytes per round'];
  const rows = [measure(16, 10), measure(64, 10), measure(64, 5), measure(64, 1)];
  const line = (cells: string[]) => `| ${cells.join(' | ')} |`;
  console.log(line(header));
  console.log(line(header.map(() => '---')));
  for (const r of rows) console.log(line(r));
  console.log(
    '\nmemory: heap and typed-array buffers, after minus before filling a journal (a full GC each side): history, decision log, 1,000 motions; the last snapshot of 9,000 guests is built before and not counted.',
  );
}

if (process.argv[1] !== undefined && process.argv[1].endsWith('status-history.ts')) main();
