import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { DrainBooking, drainBookedPath } from './drain-booking';
import { DrainProgressWriter, drainProgressPath } from './drain-progress';
import { MotionLog } from './journal';
import { Metrics } from './metrics';

/** The value of a counter's series with `via`. */
async function count(counter: Metrics['motionsIssued'], via: string): Promise<number> {
  return (await counter.get()).values.find((v) => v.labels.via === via)?.value ?? 0;
}

function setup() {
  const dir = mkdtempSync(join(tmpdir(), 'poise-drain-booking-'));
  const state = join(dir, 'state.json');
  const progress = drainProgressPath(state);
  const writer = new DrainProgressWriter(
    progress,
    { nodes: ['node3'], total: 3, at: 100, message: 'draining node3' },
    () => {
      throw new Error('no write error expected');
    },
  );
  const warnings: string[] = [];
  const daemon = () => {
    const motions = new MotionLog();
    const metrics = new Metrics();
    const booking = new DrainBooking(progress, drainBookedPath(state), motions, metrics, (m) => warnings.push(m));
    return { motions, metrics, booking };
  };
  return { dir, state, writer, warnings, daemon };
}

describe("the daemon books a drain's motions from its progress record", () => {
  it('each request and outcome once: journal entries marked drain, counters with via="drain"', async () => {
    const s = setup();
    const d = s.daemon();
    // before the first request: a drain with nothing requested books nothing
    expect(d.booking.poll()).toBe(0);
    s.writer.requested({ sid: 'vm:101', source: 'node3', target: 'node1', via: 'ha' }, 110, 'step 1');
    s.writer.requested({ sid: 'ct:102', source: 'node3', target: 'node2', via: 'ha' }, 112, 'step 1');
    expect(d.booking.poll()).toBe(2);
    expect(d.motions.list()).toMatchObject([
      {
        sid: 'vm:101',
        via: 'drain',
        kind: 'migrate',
        source: 'node3',
        target: 'node1',
        requestedAt: 110,
        result: 'in-flight',
      },
      {
        sid: 'ct:102',
        via: 'drain',
        kind: 'relocate',
        source: 'node3',
        target: 'node2',
        requestedAt: 112,
        result: 'in-flight',
      },
    ]);
    // polling again books nothing more
    expect(d.booking.poll()).toBe(0);
    s.writer.ended('vm:101', true, 150, 'vm:101 succeeded');
    s.writer.ended('ct:102', false, 160, 'ct:102 failed');
    s.writer.requested({ sid: 'vm:103', source: 'node3', target: 'node1', via: 'ha' }, 160, 'step 2');
    expect(d.booking.poll()).toBe(3);
    expect(d.booking.poll()).toBe(0);
    expect(d.motions.list()).toMatchObject([
      { sid: 'vm:101', result: 'succeeded', endedAt: 150 },
      { sid: 'ct:102', result: 'failed', endedAt: 160, reason: 'the drain says it failed' },
      { sid: 'vm:103', result: 'in-flight' },
    ]);
    expect(await count(d.metrics.motionsIssued, 'drain')).toBe(3);
    expect(await count(d.metrics.motionsSucceeded, 'drain')).toBe(1);
    expect(await count(d.metrics.motionsFailed, 'drain')).toBe(1);
    // the daemon's own motions are not counted by it
    expect(await count(d.metrics.motionsIssued, 'ha')).toBe(0);

    // a restarted daemon (fresh counters and journal) books only what is new since
    const again = s.daemon();
    expect(again.booking.poll()).toBe(0);
    expect(await count(again.metrics.motionsIssued, 'drain')).toBe(0);
    s.writer.ended('vm:103', true, 200, 'vm:103 succeeded');
    expect(again.booking.poll()).toBe(1);
    expect(await count(again.metrics.motionsSucceeded, 'drain')).toBe(1);
    expect(s.warnings).toEqual([]);
  });

  it('a motion requested and ended between two polls is booked both ways', async () => {
    const s = setup();
    const d = s.daemon();
    s.writer.requested({ sid: 'vm:101', source: 'node3', target: 'node1' }, 110, 'step 1');
    s.writer.ended('vm:101', true, 150, 'vm:101 succeeded');
    expect(d.booking.poll()).toBe(2);
    expect(d.motions.list()).toMatchObject([{ sid: 'vm:101', via: 'drain', requestedAt: 110, result: 'succeeded' }]);
    expect(await count(d.metrics.motionsIssued, 'drain')).toBe(1);
    expect(await count(d.metrics.motionsSucceeded, 'drain')).toBe(1);
  });

  it('a booking file that is no record is said once and the motions are booked afresh', () => {
    const s = setup();
    writeFileSync(drainBookedPath(s.state), '{"format":"poise-drain-booked","version":1,"keys":[7]}');
    s.writer.requested({ sid: 'vm:101', source: 'node3', target: 'node1' }, 110, 'step 1');
    const d = s.daemon();
    expect(d.booking.poll()).toBe(1);
    expect(s.warnings).toHaveLength(1);
    expect(s.warnings[0]).toMatch(/drain-booked\.json' is not a record of booked drain motions \(field 'keys\.0'/);
  });

  it('no record, or a file that is no record, books nothing', () => {
    const dir = mkdtempSync(join(tmpdir(), 'poise-drain-booking-'));
    const state = join(dir, 'state.json');
    const booking = new DrainBooking(
      drainProgressPath(state),
      drainBookedPath(state),
      new MotionLog(),
      new Metrics(),
      () => {
        throw new Error('nothing to warn about');
      },
    );
    expect(booking.poll()).toBe(0);
    writeFileSync(drainProgressPath(state), 'not json');
    expect(booking.poll()).toBe(0);
  });
});
