/**
 * The privilege each endpoint needs (spec §2), named in 401/403 errors. `{node}` and `{vmid}`
 * stand for the path parameters of the call.
 */
export const ENDPOINT_PRIVILEGES = {
  'GET /version': 'no privilege (any valid token)',
  'GET /cluster/resources':
    "'Sys.Audit' on '/nodes/{node}' and 'VM.Audit' on '/vms/{vmid}' (without them rows are filtered out, not refused)",
  'GET /cluster/status': "'Sys.Audit' on '/'",
  'GET /nodes/{node}/status': "'Sys.Audit' on '/nodes/{node}'",
  'GET /nodes/{node}/rrddata': "'Sys.Audit' on '/nodes/{node}'",
  'GET /nodes/{node}/{type}/{vmid}/rrddata': "'VM.Audit' on '/vms/{vmid}'",
  'GET /nodes/{node}/{type}/{vmid}/status/current': "'VM.Audit' on '/vms/{vmid}'",
  'GET /nodes/{node}/tasks':
    "'Sys.Audit' on '/nodes/{node}' to see tasks of other users such as 'root@pam' (the list is filtered, not refused)",
  'GET /nodes/{node}/{type}': "'VM.Audit' on '/vms/{vmid}' (the list is filtered per guest)",
  'GET /cluster/ha/status/manager_status': "'Sys.Audit' on '/'",
  'GET /cluster/ha/status/current': "'Sys.Audit' on '/'",
  'GET /cluster/ha/resources': "'Sys.Audit' on '/'",
  'GET /cluster/ha/rules': "'Sys.Audit' on '/'",
  'GET /cluster/ha/groups': "'Sys.Audit' on '/'",
  'GET /cluster/options': "'Sys.Audit' on '/' (without it 'crs' is left out)",
  'GET /nodes/{node}/{type}/{vmid}/config': "'VM.Audit' on '/vms/{vmid}'",
  'GET /nodes/{node}/{type}/{vmid}/migrate': "'VM.Migrate' on '/vms/{vmid}'",
  'POST /nodes/{node}/{type}/{vmid}/migrate':
    "'VM.Migrate' on '/vms/{vmid}' ('Datastore.AllocateSpace' on target storages with 'targetstorage')",
  'POST /cluster/ha/resources/{sid}/migrate': "'Sys.Console' on '/'",
  'POST /cluster/ha/resources/{sid}/relocate': "'Sys.Console' on '/'",
  'GET /nodes/{node}/tasks/{upid}/status':
    "the task's owner, or 'Sys.Audit' on '/nodes/{node}' (HA tasks run as 'root@pam')",
  'GET /nodes/{node}/tasks/{upid}/log':
    "the task's owner, or 'Sys.Audit' on '/nodes/{node}' (HA tasks run as 'root@pam')",
  'GET /nodes/{node}/certificates/info': 'no privilege (any valid token)',
} as const;

/** An endpoint of {@link ENDPOINT_PRIVILEGES}, `METHOD /path/template`. */
export type EndpointName = keyof typeof ENDPOINT_PRIVILEGES;

/** The privilege text of `endpoint` with `{node}`/`{vmid}` filled in. */
export function privilegeFor(endpoint: EndpointName, params: { node?: string; vmid?: number } = {}): string {
  let text: string = ENDPOINT_PRIVILEGES[endpoint];
  if (params.node !== undefined) text = text.split('{node}').join(params.node);
  if (params.vmid !== undefined) text = text.split('{vmid}').join(String(params.vmid));
  return text;
}
