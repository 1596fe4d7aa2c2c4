import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { Logger } from '../log';
import { FakeCluster } from '../testing/fake-cluster';
import { listeningDaemon } from '../testing/listening-daemon';
import { motionRecord, T0 } from '../testing/support';
import { HISTORY_SECONDS, Journal } from './journal';
import { JOURNAL_SAVE_SECONDS, JournalStore, journalPath, journalText } from './journal-store';
import type { RoundReport } from './report';

const GIB = 1024 ** 3;
const NO_FACTS = { motion: null, outcomes: [] };

function logger() {
  const lines: string[] = [];
  const log = new Logger(
    { format: 'json', level: 'debug' },
    (l) => lines.push(l),
    () => T0,
  );
  return { log, records: () => lines.map((l) => JSON.parse(l) as { level: string; msg: string }) };
}

function report(round: number, extra: Partial<RoundReport> = {}): RoundReport {
  return {
    round,
    outcome: 'skip',
    reason: 'below-threshold',
    message: `round ${round}`,
    level: 'info',
    fields: {},
    ...extra,
  };
}

/** A journal of `n` rounds 10 s apart from `start`, two nodes read each round, one motion done and one in flight. */
function filled(n: number, start = T0): Journal {
  const j = new Journal(10);
  for (let r = 1; r <= n; r++) {
    const time = start + 10 * (r - 1);
    j.observe({
      round: r,
      time,
      quorate: true,
      imbalance: 0.5,
      nodes: ['node1', 'node2'].map((name, i) => ({
        name,
        condition: 'online',
        state: 'settled',
        balanced: true,
        cpuCores: undefined,
        maxCpuCores: undefined,
        memBytes: undefined,
        maxMemBytes: undefined,
        cpu: 0.25 * (i + 1),
        mem: 0.125,
        load: undefined,
        pressureCpu: i === 0 ? 12.5 : undefined,
        pressureMem: undefined,
        guests: 1,
        haResources: 1,
      })),
      snapshot: undefined as never,
    });
    j.round(report(r, r === 2 ? { outcome: 'move', reason: 'move', fields: { sid: 'vm:101' } } : {}), time, `t${r}`);
  }
  j.motions.requested(motionRecord({ issuedAt: start + 10 }));
  j.motions.ended(motionRecord(), 'succeeded', undefined, start + 30);
  j.motions.requested(motionRecord({ sid: 'vm:102', resources: ['vm:102'], issuedAt: start + 40 }));
  return j;
}

describe('where the journal is kept', () => {
  it('beside state.file, except on the cluster file system', () => {
    expect(journalPath('/var/lib/poise-manager/state.json')).toBe('/var/lib/poise-manager/journal.json');
    expect(journalPath('/srv/poise/state.json')).toBe('/srv/poise/journal.json');
    // pmxcfs replicates every file to every node: the journal stays local
    expect(journalPath('/etc/pve/priv/poise-manager/state.json')).toBe('/var/lib/poise-manager/journal.json');
  });
});

describe('the journal store', () => {
  const dir = () => mkdtempSync(join(tmpdir(), 'poise-journal-'));

  it('brings back the history, the decisions and the motions as the page saw them', () => {
    const path = join(dir(), 'journal.json');
    const before = filled(5);
    const { log } = logger();
    expect(new JournalStore(path, before, log).save()).toBe(true);
    const after = new Journal(10);
    const { log: log2, records } = logger();
    const restored = new JournalStore(path, after, log2).load(T0 + 60, NO_FACTS);
    expect(restored).toEqual({ rounds: 5, decisions: 5, motions: 2, lastRound: 5 });
    expect(after.history.toJson()).toEqual(before.history.toJson());
    expect(after.decisions.query()).toEqual(before.decisions.query());
    // vm:102 was in flight and the state does not follow it: its end is not known
    expect(after.motions.list()).toEqual([
      before.motions.list()[0],
      {
        ...before.motions.list()[1],
        result: 'failed',
        reason: 'outcome not known: the daemon stopped before it was recorded',
      },
    ]);
    expect(records().at(-1)!.msg).toBe(
      `journal loaded from '${path}': 5 rounds, 5 decisions, 2 motions of before (the page's history goes on)`,
    );
  });

  it('a motion shown in flight stays in flight when the state follows it, and takes the outcome the state kept', () => {
    const path = join(dir(), 'journal.json');
    new JournalStore(path, filled(3), logger().log).save();
    const followed = new Journal(10);
    new JournalStore(path, followed, logger().log).load(T0 + 60, {
      motion: motionRecord({ sid: 'vm:102', resources: ['vm:102'], issuedAt: T0 + 40 }),
      outcomes: [],
    });
    expect(followed.motions.list()[1]).toMatchObject({ sid: 'vm:102', result: 'in-flight' });
    const ended = new Journal(10);
    new JournalStore(path, ended, logger().log).load(T0 + 60, {
      motion: null,
      outcomes: [
        {
          sid: 'vm:102',
          source: 'node1',
          target: 'node2',
          via: 'ha',
          result: 'failed',
          reason: 'migration failed',
          at: T0 + 55,
        },
      ],
    });
    expect(ended.motions.list()[1]).toMatchObject({
      sid: 'vm:102',
      result: 'failed',
      endedAt: T0 + 55,
      reason: 'migration failed',
    });
  });

  it('leaves out rounds and decisions older than a day', () => {
    const path = join(dir(), 'journal.json');
    new JournalStore(path, filled(4), logger().log).save();
    const after = new Journal(10);
    // rounds at T0, T0+10, T0+20, T0+30: a day after T0+15 keeps the last two
    const restored = new JournalStore(path, after, logger().log).load(T0 + 15 + HISTORY_SECONDS, NO_FACTS);
    expect(restored).toMatchObject({ rounds: 2, decisions: 2, lastRound: 4 });
    expect(after.history.toJson().rounds).toEqual([3, 4]);
  });

  it('writes at most every JOURNAL_SAVE_SECONDS of real time, and only with news', () => {
    const path = join(dir(), 'journal.json');
    let now = 1000;
    const journal = filled(2);
    const store = new JournalStore(path, journal, logger().log, () => now);
    store.saveIfDue();
    expect(() => readFileSync(path)).toThrow(); // not yet
    now += JOURNAL_SAVE_SECONDS;
    store.saveIfDue();
    expect(JSON.parse(readFileSync(path, 'utf8')).history.rounds).toEqual([1, 2]);
    writeFileSync(path, 'marker');
    now += JOURNAL_SAVE_SECONDS;
    store.saveIfDue(); // nothing new since: not written
    expect(readFileSync(path, 'utf8')).toBe('marker');
    journal.round(report(3), T0 + 20, 't3');
    now += 1;
    store.saveIfDue(); // news, but too soon
    expect(readFileSync(path, 'utf8')).toBe('marker');
    expect(store.save()).toBe(true); // at stop: at once
    expect(JSON.parse(readFileSync(path, 'utf8')).history.rounds).toEqual([1, 2, 3]);
  });

  it.each([
    ['not JSON', '{"format":', /^the journal '.*' is not JSON \(.+\): ignored/],
    [
      'another file',
      '{"format":"poise-manager-state","version":1}',
      /is not a poise-manager journal \(format "poise-manager-state"\): ignored/,
    ],
    [
      'another version',
      '{"format":"poise-manager-journal","version":2}',
      /has version 2; this poise-manager reads version 1: ignored/,
    ],
    [
      'a column out of line',
      JSON.stringify({
        format: 'poise-manager-journal',
        version: 1,
        savedAt: 'x',
        history: { rounds: [1, 2], time: [T0], outcome: ['skip', 'skip'], imbalance: [null, null], nodes: {} },
        decisions: [],
        motions: [],
      }),
      /is corrupt \('history\.time': expected 2 values \(one per round\), got 1\): ignored/,
    ],
    [
      'rounds out of order',
      JSON.stringify({
        format: 'poise-manager-journal',
        version: 1,
        savedAt: 'x',
        history: { rounds: [2, 1], time: [T0, T0], outcome: ['skip', 'skip'], imbalance: [null, null], nodes: {} },
        decisions: [],
        motions: [],
      }),
      /is corrupt \('history\.rounds\.1': expected rounds in increasing order\): ignored/,
    ],
  ])('a file that is %s is logged and ignored, never fatal', (_, text, message) => {
    const path = join(dir(), 'journal.json');
    writeFileSync(path, text);
    const journal = new Journal(10);
    const { log, records } = logger();
    expect(new JournalStore(path, journal, log).load(T0, NO_FACTS)).toEqual({
      rounds: 0,
      decisions: 0,
      motions: 0,
      lastRound: 0,
    });
    expect(journal.history.size).toBe(0);
    const line = records().at(-1)!;
    expect(line.level).toBe('warn');
    expect(line.msg).toMatch(message);
    expect(line.msg).toMatch(/the file is replaced at the next save\)$/);
  });

  it('a journal that cannot be written is said once, and the daemon goes on', () => {
    const d = dir();
    writeFileSync(join(d, 'file'), '');
    const path = join(d, 'file', 'journal.json'); // its directory is a file
    const journal = filled(2);
    const { log, records } = logger();
    const store = new JournalStore(path, journal, log);
    expect(store.save()).toBe(false);
    journal.round(report(3), T0 + 20, 't3');
    expect(store.save()).toBe(false);
    const warnings = records().filter((r) => r.level === 'warn');
    expect(warnings).toHaveLength(1);
    expect(warnings[0]!.msg).toMatch(
      /^cannot save the journal: cannot write the state file '.*journal\.json': .+; the daemon goes on/,
    );
  });

  it('is bounded in bytes: the oldest rounds (and their decisions) are left out first, the newest kept', () => {
    const journal = filled(64);
    const h = journal.history.toJson();
    const d = journal.decisions.query();
    const whole = journalText(h, d, []);
    // 60 % of the whole: 32 rounds (half, with the fixed part of the file) fit, 64 do not
    const bound = Math.floor(Buffer.byteLength(whole) * 0.6);
    const cut = JSON.parse(journalText(h, d, [], bound));
    expect(Buffer.byteLength(JSON.stringify(cut))).toBeLessThanOrEqual(bound);
    // halved until it fits: 64 → 32 rounds kept, the newest
    expect(cut.history.rounds).toEqual(h.rounds.slice(32));
    expect(cut.decisions.map((x: { round: number }) => x.round)).toEqual(h.rounds.slice(32));
    expect(cut.history.nodes.node1.pressureCpu).toHaveLength(32);
  });
});

describe("the page's history survives a restart", () => {
  it('run some rounds, stop, start again: the history, decisions and motions are there and the rounds go on from there', async () => {
    const cluster = FakeCluster.create({
      nodes: [{ name: 'node1' }, { name: 'node2' }, { name: 'node3' }],
      guests: ['vm:101', 'vm:102', 'vm:103', 'vm:104', 'vm:105', 'vm:106'].map((sid) => ({
        sid,
        node: 'node1',
        cpu: 2,
        mem: 8 * GIB,
      })),
    });
    const first = await listeningDaemon({}, { cluster });
    await first.run(6);
    const api = async (port: number, path: string) => (await fetch(`http://127.0.0.1:${port}${path}`)).json();
    const history = (await api(first.port, '/api/history')) as { rounds: number[] };
    const motions = (await api(first.port, '/api/motions')) as { motions: unknown[] };
    expect(history.rounds).toEqual([1, 2, 3, 4, 5, 6]);
    expect(motions.motions.length).toBeGreaterThan(0);
    await first.close();

    const second = await listeningDaemon({}, { dir: first.dir, cluster });
    try {
      expect(second.records()).toContainEqual(
        expect.objectContaining({
          event: 'state',
          msg: `journal loaded from '${join(first.dir, 'journal.json')}': 6 rounds, 6 decisions, ${motions.motions.length} motions of before (the page's history goes on)`,
        }),
      );
      await second.run(2);
      const again = (await api(second.port, '/api/history')) as { rounds: number[] };
      expect(again.rounds).toEqual([1, 2, 3, 4, 5, 6, 7, 8]);
      const decisions = (await api(second.port, '/api/decisions')) as { decisions: { round: number }[] };
      expect(decisions.decisions.map((x) => x.round)).toEqual([1, 2, 3, 4, 5, 6, 7, 8]);
      const after = (await api(second.port, '/api/motions')) as { motions: unknown[] };
      expect(after.motions.slice(0, motions.motions.length)).toEqual(
        (motions.motions as { result: string }[]).map((m) =>
          m.result === 'in-flight' ? expect.objectContaining({ sid: (m as unknown as { sid: string }).sid }) : m,
        ),
      );
      // this run's count: the page sees a new run (fewer rounds than before) and reloads its history
      expect(((await api(second.port, '/status')) as { rounds: number }).rounds).toBe(2);
      expect(
        second
          .records()
          .filter((r) => r.event === 'round')
          .map((r) => r.round),
      ).toEqual([7, 8]);
    } finally {
      await second.close();
    }
  });
});
