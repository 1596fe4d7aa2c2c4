/**
 * The size of the status page's saved journal (`apps/manager/src/runtime/journal-store.ts`)
 * and the time of one save and one load: a day of rounds at the default interval (10 s: 8,641
 * rounds) of 16, 36 and 64 nodes, every node reporting pressure, a decision line per round
 * and a full motion log. Times are of this machine, one run each: read them as orders of
 * magnitude.
 *
 *   pnpm tsx --conditions=poise-source bench/journal-store.ts
 *
 * Prints a table; never a test.
 */
import { mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { Logger } from '../apps/manager/src/log';
import { historyCapacity, Journal, MOTION_LOG_MAX } from '../apps/manager/src/runtime/journal';
import { JournalStore } from '../apps/manager/src/runtime/journal-store';
import { motionRecord, T0 } from '../apps/manager/src/testing/support';

const INTERVAL_SECONDS = 10;

function dayOf(nodes: number): Journal {
  const journal = new Journal(INTERVAL_SECONDS);
  const names = Array.from({ length: nodes }, (_, i) => `node${String(i + 1).padStart(2, '0')}`);
  const rounds = historyCapacity(INTERVAL_SECONDS);
  for (let r = 1; r <= rounds; r++) {
    const time = T0 + INTERVAL_SECONDS * (r - 1);
    journal.history.push(
      r,
      time,
      r % 10 === 0 ? 'move' : 'skip',
      0.2 + 0.1 * Math.sin(r / 50),
      names.map((name, i) => ({
        name,
        cpu: 0.3 + 0.2 * Math.sin((r + i) / 30),
        mem: 0.5 + 0.1 * Math.cos((r + i) / 40),
        pressureCpu: 5 + 3 * Math.sin(r / 20),
        pressureMem: 1 + Math.cos(r / 25),
      })),
    );
    journal.decisions.add({
      round: r,
      time,
      timeText: new Date(time * 1000).toISOString(),
      outcome: r % 10 === 0 ? 'move' : 'skip',
      reason: r % 10 === 0 ? 'move' : 'below-threshold',
      level: 'info',
      message:
        r % 10 === 0
          ? `migrate vm:${100 + (r % 700)} from node01 to node02 (imbalance 31.2% → 24.0%)`
          : 'imbalance 21.4% ≤ 30.0% (threshold): nothing to do',
      key: `k${r % 7}`,
    });
  }
  for (let m = 0; m < MOTION_LOG_MAX; m++) {
    const record = motionRecord({ sid: `vm:${100 + m}`, resources: [`vm:${100 + m}`], issuedAt: T0 + 60 * m });
    journal.motions.requested(record);
    journal.motions.ended(record, 'succeeded', undefined, T0 + 60 * m + 30);
  }
  return journal;
}

const log = new Logger(
  { format: 'json', level: 'error' },
  () => {},
  () => T0,
);
console.log('| nodes | rounds | file | save | load |');
console.log('|---|---|---|---|---|');
for (const nodes of [16, 36, 64]) {
  const dir = mkdtempSync(join(tmpdir(), 'poise-journal-bench-'));
  const path = join(dir, 'journal.json');
  const journal = dayOf(nodes);
  let t = performance.now();
  new JournalStore(path, journal, log).save();
  const saveMs = performance.now() - t;
  const bytes = statSync(path).size;
  t = performance.now();
  const restored = new JournalStore(path, new Journal(INTERVAL_SECONDS), log).load(
    T0 + INTERVAL_SECONDS * historyCapacity(INTERVAL_SECONDS),
    { motion: null, outcomes: [] },
  );
  const loadMs = performance.now() - t;
  console.log(
    `| ${nodes} | ${restored.rounds.toLocaleString('en')} | ${(bytes / 1024 / 1024).toFixed(1)} MiB | ${saveMs.toFixed(0)} ms | ${loadMs.toFixed(0)} ms |`,
  );
  rmSync(dir, { recursive: true, force: true });
}
