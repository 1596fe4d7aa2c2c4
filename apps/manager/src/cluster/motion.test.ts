import { describe, expect, it } from 'vitest';
import { followHaMotion } from './motion';
import type { GuestSnapshot, MotionRecord, NodeSnapshot } from './port';
import { haGuest, motionRecord, node, plainGuest, snapshot, T0 } from '../testing/support';

const MOTION: MotionRecord = motionRecord();
const NODES = [node('node1'), node('node2'), node('node3')];
const PICKUP = 120;

function follow(guests: GuestSnapshot[], motion: Partial<MotionRecord> = {}, secondsAfter = 10) {
  return followHaMotion({ ...MOTION, ...motion }, snapshot(NODES, guests), {
    now: T0 + secondsAfter,
    pickupTimeoutSeconds: PICKUP,
  });
}

describe('followHaMotion', () => {
  it.each<[string, GuestSnapshot[], Partial<MotionRecord>, number, unknown]>([
    ['started on the target: succeeded', [haGuest('vm:101', 'node2')], {}, 10, { status: 'succeeded' }],
    [
      'started on the target without ever being seen moving: succeeded',
      [haGuest('vm:101', 'node2')],
      { phase: 'requesting' },
      10,
      { status: 'succeeded' },
    ],
    [
      'on the target in request_start (after a relocate): succeeded',
      [haGuest('vm:101', 'node2', { state: 'request_start' })],
      {},
      10,
      { status: 'succeeded' },
    ],
    [
      'migrating to the target: pending, moving',
      [haGuest('vm:101', 'node1', { state: 'migrate', target: 'node2' })],
      {},
      10,
      { status: 'pending', phase: 'moving' },
    ],
    [
      'still started on the source, not yet picked up: pending, queued',
      [haGuest('vm:101', 'node1')],
      {},
      10,
      { status: 'pending', phase: 'queued' },
    ],
    [
      'a motion written before its request left is followed like a queued one',
      [haGuest('vm:101', 'node1')],
      { phase: 'requesting' },
      10,
      { status: 'pending', phase: 'queued' },
    ],
    [
      'back on the source after moving: failed',
      [haGuest('vm:101', 'node1')],
      { phase: 'moving' },
      30,
      { status: 'failed', reason: "migration failed, 'vm:101' is back on 'node1'" },
    ],
    [
      'never picked up within the pickup timeout: failed (dropped)',
      [haGuest('vm:101', 'node1')],
      {},
      PICKUP + 1,
      {
        status: 'failed',
        reason:
          'the HA manager did not pick the command up within 120 s: it was never queued, or the HA manager dropped it (a negative-affinity partner on the target)',
      },
    ],
    [
      'exactly at the pickup timeout: still pending',
      [haGuest('vm:101', 'node1')],
      {},
      PICKUP,
      { status: 'pending', phase: 'queued' },
    ],
    [
      'in error: failed',
      [haGuest('vm:101', 'node1', { state: 'error' })],
      { phase: 'moving' },
      30,
      { status: 'failed', reason: "'vm:101' is in the HA error state on 'node1'" },
    ],
    [
      'on the target but in error: failed',
      [haGuest('vm:101', 'node2', { state: 'error' })],
      { phase: 'moving' },
      30,
      { status: 'failed', reason: "'vm:101' is in the HA error state on 'node2'" },
    ],
    [
      'fenced: failed',
      [haGuest('vm:101', 'node1', { state: 'fence' })],
      {},
      30,
      { status: 'failed', reason: "'vm:101' is in HA state 'fence' (its node failed)" },
    ],
    [
      'moving elsewhere: failed',
      [haGuest('vm:101', 'node1', { state: 'migrate', target: 'node3' })],
      {},
      30,
      { status: 'failed', reason: "'vm:101' is moving to 'node3' instead" },
    ],
    [
      'on a third node: failed',
      [haGuest('vm:101', 'node3')],
      {},
      30,
      { status: 'failed', reason: "'vm:101' is on 'node3', neither source nor target" },
    ],
    [
      'frozen on the source (node shutdown): pending',
      [haGuest('vm:101', 'node1', { state: 'freeze' })],
      { phase: 'moving' },
      500,
      { status: 'pending', phase: 'moving' },
    ],
    [
      'stopped on the source: failed',
      [haGuest('vm:101', 'node1', { state: 'stopped', running: false })],
      {},
      30,
      { status: 'failed', reason: "'vm:101' went to HA state 'stopped' on 'node1'" },
    ],
    [
      'started on the source, never seen moving, but its HA uid changed since the request: failed between two reads',
      [
        haGuest('vm:101', 'node1', {
          ha: { state: 'started', target: undefined, requestState: 'started', autoRebalance: true, uid: 'u2' },
        }),
      ],
      { haUid: 'u1' },
      30,
      {
        status: 'failed',
        reason: "migration failed, 'vm:101' is back on 'node1' (its HA state changed since the request)",
      },
    ],
    [
      'started on the source, the same HA uid: pending, queued',
      [
        haGuest('vm:101', 'node1', {
          ha: { state: 'started', target: undefined, requestState: 'started', autoRebalance: true, uid: 'u1' },
        }),
      ],
      { haUid: 'u1' },
      30,
      { status: 'pending', phase: 'queued' },
    ],
    [
      'in a state this build does not know: pending',
      [haGuest('vm:101', 'node1', { state: 'unknown' })],
      { phase: 'moving' },
      30,
      { status: 'pending', phase: 'moving' },
    ],
    ['gone: failed', [], {}, 30, { status: 'failed', reason: "'vm:101' is gone from the cluster" }],
    [
      'no longer HA: failed',
      [plainGuest('vm:101', 'node1')],
      {},
      30,
      { status: 'failed', reason: "'vm:101' is no longer an HA resource" },
    ],
  ])('%s', (_name, guests, motion, after, expected) => {
    expect(follow(guests, motion, after)).toEqual(expected);
  });

  it.each<[NodeSnapshot['condition'], string]>([
    ['offline', 'is offline (not in the cluster membership)'],
    ['unknown', "has failed (HA node state 'unknown': its HA services wait for fencing)"],
    ['fence', "is being fenced (HA node state 'fence')"],
    ['gone', "is gone from the cluster (HA node state 'gone')"],
  ])('the target %s before the motion started: failed at once, not after the pickup timeout', (condition, what) => {
    const nodes = [node('node1'), node('node2', { online: false, condition }), node('node3')];
    const progress = followHaMotion(MOTION, snapshot(nodes, [haGuest('vm:101', 'node1')]), {
      now: T0 + 10,
      pickupTimeoutSeconds: PICKUP,
    });
    expect(progress).toEqual({
      status: 'failed',
      reason: `the target 'node2' ${what} before the HA manager started the motion: it drops the command`,
    });
  });

  it('a target gone from the node list fails the motion at once; a target in maintenance or one already moving to does not', () => {
    expect(
      followHaMotion(MOTION, snapshot([node('node1')], [haGuest('vm:101', 'node1')]), {
        now: T0 + 10,
        pickupTimeoutSeconds: PICKUP,
      }),
    ).toMatchObject({
      status: 'failed',
      reason:
        "the target 'node2' is no longer in the cluster before the HA manager started the motion: it drops the command",
    });
    const maintenance = [node('node1'), node('node2', { online: false, maintenance: true, condition: 'maintenance' })];
    expect(
      followHaMotion(MOTION, snapshot(maintenance, [haGuest('vm:101', 'node1')]), {
        now: T0 + 10,
        pickupTimeoutSeconds: PICKUP,
      }),
    ).toEqual({ status: 'pending', phase: 'queued' });
    // moving already: the HA manager finishes or fails it, and says so
    const failedTarget = [node('node1'), node('node2', { online: false, condition: 'unknown' })];
    expect(
      followHaMotion(
        MOTION,
        snapshot(failedTarget, [haGuest('vm:101', 'node1', { state: 'migrate', target: 'node2' })]),
        { now: T0 + 10, pickupTimeoutSeconds: PICKUP },
      ),
    ).toEqual({
      status: 'pending',
      phase: 'moving',
    });
  });
});
