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
  'GET /access/permissions': "no privilege (a token reads its own; another user's needs 'Sys.Audit' on '/access')",
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

/** A privilege on an ACL path, e.g. `'VM.Migrate'` on `'/vms/101'`. */
export interface PrivilegeNeed {
  /** ACL path (`/`, `/vms/101`, `/nodes/pve1`). */
  readonly path: string;
  /** Privilege name as Proxmox VE spells it (`Sys.Console`). */
  readonly privilege: string;
}

/**
 * The one privilege each action (POST) poise sends needs (spec §2), as data: `{vmid}` in the
 * path stands for the guest. The HA endpoints check `Sys.Console` on `/` (pve-ha-manager
 * `API2/HA/Resources.pm`), the guest migrate endpoint `VM.Migrate` on the guest (qemu-server
 * `API2/Qemu.pm`; poise sends neither `targetstorage` nor the root-only parameters).
 */
export const ACTION_PRIVILEGES = {
  'POST /cluster/ha/resources/{sid}/migrate': { path: '/', privilege: 'Sys.Console' },
  'POST /cluster/ha/resources/{sid}/relocate': { path: '/', privilege: 'Sys.Console' },
  'POST /nodes/{node}/{type}/{vmid}/migrate': { path: '/vms/{vmid}', privilege: 'VM.Migrate' },
} as const satisfies Readonly<Record<string, PrivilegeNeed>>;

/** An action of {@link ACTION_PRIVILEGES}. */
export type ActionName = keyof typeof ACTION_PRIVILEGES;

/** The privilege `action` needs, `{vmid}` filled in. */
export function actionPrivilege(action: ActionName, params: { vmid?: number } = {}): PrivilegeNeed {
  const need = ACTION_PRIVILEGES[action];
  return {
    path: params.vmid === undefined ? need.path : need.path.split('{vmid}').join(String(params.vmid)),
    privilege: need.privilege,
  };
}

/**
 * Whether `permissions` (a reply of `GET /access/permissions`: ACL path → privilege →
 * propagate) grants `need`. The entry of the path itself counts whole; otherwise the nearest
 * ancestor listed decides, with its propagated privileges only (a more specific ACL replaces
 * what is inherited, as `PVE::RPCEnvironment::permissions` computes it). Asked with `path`,
 * the reply holds that path's effective privileges and the first rule alone applies.
 */
export function grantsPrivilege(
  permissions: ReadonlyMap<string, ReadonlyMap<string, boolean>>,
  need: PrivilegeNeed,
): boolean {
  const own = permissions.get(need.path);
  if (own !== undefined) return own.has(need.privilege);
  const parts = need.path.split('/').filter((p) => p !== '');
  for (let n = parts.length - 1; n >= 0; n--) {
    const ancestor = `/${parts.slice(0, n).join('/')}`;
    const privileges = permissions.get(ancestor);
    if (privileges !== undefined) return privileges.get(need.privilege) === true;
  }
  return false;
}
