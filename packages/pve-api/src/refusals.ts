/**
 * How a refusal of an action looks on the wire: the API handler `die`s with a message and
 * pveproxy answers HTTP 500 with it as the reason phrase and the body's `message` (spec §4.1).
 * Such a 500 means the handler stopped before it changed anything (the HA migrate endpoint
 * queues its command last; a guest migration starts no task), so the request is certainly not
 * applied. A 500 whose message is not one of these (a crash, a proxy in front of pveproxy) stays
 * an unknown outcome. Each entry is the message of a `die` of the endpoints poise posts to.
 */
export const ACTION_REFUSALS: readonly { readonly pattern: RegExp; readonly what: string }[] = [
  // pve-ha-manager API2/HA/Resources.pm check_service_state
  { pattern: /\bin error state, must be disabled and fixed first\b/, what: 'the HA resource is in the error state' },
  // PVE::HA::Config service_is_ha_managed / service_is_configured
  {
    pattern: /\b(?:service|resource) '[^']*' (?:is )?not (?:HA managed|managed by HA|configured in HA|defined)\b/,
    what: 'not an HA resource',
  },
  // PVE::Cluster::check_node_exists
  { pattern: /\bno such (?:cluster )?node\b/, what: 'no such node' },
  // PVE 9 after the groups were migrated to rules
  { pattern: /\bha groups have been migrated to rules\b/, what: 'groups migrated to rules' },
  // the HA domain lock was not obtained: the command was never written
  { pattern: /^cfs-lock '[^']*' error\b/, what: 'the cluster file system lock was not obtained' },
  // a resource affinity or other conflict the handler checks before queueing
  { pattern: /\bcannot be (?:moved|migrated|relocated)\b/, what: 'the move is not possible' },
  // qemu-server / pve-container migrate: checks before the task starts
  { pattern: /\b(?:can't|cannot|unable to) migrate\b/i, what: 'the migration is not possible' },
  { pattern: /\bis locked\b/, what: 'the guest is locked' },
  { pattern: /^Configuration file '[^']*' does not exist\b/, what: 'no such guest' },
  { pattern: /\btarget node is local node\b/i, what: 'the target is the source' },
];

/** Whether an error reply to an action (a POST) is the handler's refusal: HTTP 500 with one of {@link ACTION_REFUSALS}. */
export function isActionRefusal(status: number, message: string): boolean {
  return status === 500 && ACTION_REFUSALS.some((r) => r.pattern.test(message));
}
