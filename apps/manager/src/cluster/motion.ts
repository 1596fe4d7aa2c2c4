import { describeCondition, nodeFailed } from './condition';
import type { ClusterSnapshot, MotionProgress, MotionRecord } from './port';

/**
 * How an HA motion's outcome is read from the HA manager status (spec §4.1), shared by every
 * adapter so the simulator, the API and the fake judge alike.
 *
 * The API's migrate/relocate call only appends a command to `crm_commands`; the CRM picks it up
 * on its next round (~10 s) and then shows the service in `migrate`/`relocate` with a `target`.
 * Until then the service is still `started` on the source, which looks the same as a failed
 * motion that came back. So:
 *
 * | HA state of the sid | on node | seen moving before | → |
 * |---|---|---|---|
 * | any but `error`, `fence`, `recovery` | target | — | succeeded |
 * | `migrate`/`relocate` to the target | source | — | pending (moving) |
 * | `migrate`/`relocate` elsewhere | — | — | failed (moved elsewhere) |
 * | `started` | source | yes | failed (back on the source) |
 * | `started`, its HA `uid` changed since the request | source | no | failed (moved and came back between two reads) |
 * | `started`, the target offline, unknown, fenced or gone | source | no | failed at once (the CRM drops a command to a node that is not online) |
 * | `started` | source | no, within `pickupTimeoutSeconds` | pending (queued) |
 * | `started` | source | no, after it | failed (not picked up: never queued — a request whose reply was lost — or dropped by the CRM for a negative-affinity partner on the target; an offline target and a service already there are told apart above) |
 * | `freeze` | source | — | pending (a node shutdown; the motion timeout bounds it) |
 * | `unknown` (a state this build does not know) | source | — | pending (the motion timeout bounds it) |
 * | `error` / `fence` / `recovery` / `stopped` / … | not target | — | failed |
 * | gone, or no longer HA | — | — | failed |
 *
 * A fast migration may finish between two reads: started on the target without ever being
 * seen moving is a success.
 */
export function followHaMotion(
  motion: MotionRecord,
  snapshot: ClusterSnapshot,
  options: { now: number; pickupTimeoutSeconds: number },
): MotionProgress {
  const guest = snapshot.guests.find((g) => g.sid === motion.sid);
  if (!guest) return { status: 'failed', reason: `'${motion.sid}' is gone from the cluster` };
  const ha = guest.ha;
  if (!ha) return { status: 'failed', reason: `'${motion.sid}' is no longer an HA resource` };
  const state = ha.state;
  if (state === 'error')
    return { status: 'failed', reason: `'${motion.sid}' is in the HA error state on '${guest.node}'` };
  if (state === 'fence' || state === 'recovery') {
    return { status: 'failed', reason: `'${motion.sid}' is in HA state '${state}' (its node failed)` };
  }
  if (guest.node === motion.target && state !== 'migrate' && state !== 'relocate') return { status: 'succeeded' };
  if (state === 'migrate' || state === 'relocate') {
    if (ha.target === motion.target) return { status: 'pending', phase: 'moving' };
    return { status: 'failed', reason: `'${motion.sid}' is moving to '${ha.target ?? '?'}' instead` };
  }
  if (guest.node !== motion.source) {
    return { status: 'failed', reason: `'${motion.sid}' is on '${guest.node}', neither source nor target` };
  }
  if (state === 'started') {
    if (motion.phase === 'moving')
      return { status: 'failed', reason: `migration failed, '${motion.sid}' is back on '${motion.source}'` };
    // not seen moving, but the HA manager changed its state since the request: it moved and came back
    if (motion.haUid !== undefined && ha.uid !== undefined && ha.uid !== motion.haUid) {
      return {
        status: 'failed',
        reason: `migration failed, '${motion.sid}' is back on '${motion.source}' (its HA state changed since the request)`,
      };
    }
    const target = snapshot.nodes.find((n) => n.name === motion.target);
    if (target === undefined || nodeFailed(target.condition)) {
      const what = target === undefined ? 'is no longer in the cluster' : describeCondition(target.condition);
      return {
        status: 'failed',
        reason: `the target '${motion.target}' ${what} before the HA manager started the motion: it drops the command`,
      };
    }
    if (options.now - motion.issuedAt > options.pickupTimeoutSeconds) {
      return {
        status: 'failed',
        reason: `the HA manager did not pick the command up within ${options.pickupTimeoutSeconds} s: it was never queued, or the HA manager dropped it (a negative-affinity partner on the target)`,
      };
    }
    return { status: 'pending', phase: 'queued' };
  }
  // a node shutdown (freeze), or a state of a newer Proxmox VE: the motion timeout bounds it
  if (state === 'freeze' || state === 'unknown')
    return { status: 'pending', phase: motion.phase === 'moving' ? 'moving' : 'queued' };
  return { status: 'failed', reason: `'${motion.sid}' went to HA state '${state}' on '${motion.source}'` };
}
