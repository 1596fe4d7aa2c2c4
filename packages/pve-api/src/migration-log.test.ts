import { describe, expect, it } from 'vitest';
import { parseMigrationLog } from './index';

const GIB = 1024 ** 3;
const MIB = 1024 ** 2;

/** A live migration's log as qemu-server writes it (one 4 GiB guest, two pre-copy rounds). */
const LOG = [
  "2026-12-06 02:00:00 starting migration of VM 100 to node 'node2' (10.0.0.2)",
  "2026-12-06 02:00:01 starting VM 100 on remote node 'node2'",
  '2026-12-06 02:00:03 start remote tunnel',
  '2026-12-06 02:00:03 ssh tunnel ver 1',
  '2026-12-06 02:00:03 starting online/live migration on unix:/run/qemu-server/100.migrate',
  '2026-12-06 02:00:03 set migration capabilities',
  '2026-12-06 02:00:03 migration downtime limit: 100 ms',
  '2026-12-06 02:00:04 migration active, transferred 1.1 GiB of 4.0 GiB VM-state, 1.1 GiB/s',
  '2026-12-06 02:00:05 migration active, transferred 2.2 GiB of 4.0 GiB VM-state, 1.1 GiB/s',
  '2026-12-06 02:00:07 migration active, transferred 4.3 GiB of 4.0 GiB VM-state, 1.0 GiB/s',
  '2026-12-06 02:00:08 average migration speed: 1.0 GiB/s - downtime 45 ms',
  '2026-12-06 02:00:08 migration status: completed',
  '2026-12-06 02:00:11 migration finished successfully (duration 00:00:11)',
  'TASK OK',
];

describe('parseMigrationLog', () => {
  it('reads the duration and the largest transferred figure', () => {
    expect(parseMigrationLog(LOG)).toEqual({
      ok: true,
      durationSeconds: 11,
      transferredBytes: Math.round(4.3 * GIB),
    });
  });

  it('hours and minutes of the duration; KiB and MiB sizes', () => {
    const log = [
      'x migration active, transferred 512.5 MiB of 64.0 GiB VM-state, 10.0 MiB/s',
      'x migration active, transferred 900 KiB of 64.0 GiB VM-state, 10.0 MiB/s',
      'x migration finished successfully (duration 01:02:03)',
    ];
    expect(parseMigrationLog(log)).toEqual({ ok: true, durationSeconds: 3723, transferredBytes: 512.5 * MIB });
  });

  it.each([
    [LOG.slice(0, -2), "no 'migration finished successfully (duration …)' line"],
    [
      ['migration finished successfully (duration 00:00:00)', 'migration active, transferred 1 GiB of 1 GiB VM-state'],
      'a duration of 0 s',
    ],
    [LOG.filter((l) => !l.includes('transferred')), "no 'migration active, transferred …' line"],
    [
      ['2026-12-06 02:00:00 migration problems', 'TASK ERROR: migration problems'],
      "no 'migration finished successfully (duration …)' line",
    ],
    ['not a log' as never, 'the log is not a list of lines'],
  ])('a log that says nothing usable: %#', (lines, reason) => {
    expect(parseMigrationLog(lines)).toEqual({ ok: false, reason });
  });
});
