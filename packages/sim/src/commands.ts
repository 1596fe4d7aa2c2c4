/** Service states `service <sid> <state>` may set. */
const SERVICE_STATES = new Set(['started', 'disabled', 'stopped', 'ignored', 'enabled']);

/**
 * Checks one cmdlist command against the simulator's command language (spec §2). Returns a
 * description of the problem, or undefined when the command is well-formed.
 */
export function validateCommand(cmd: string, nodes: string[]): string | undefined {
  const words = cmd.trim().split(/\s+/);
  const [verb, obj, action, ...params] = words;
  const isNum = (s: string | undefined) => s !== undefined && /^-?\d+(\.\d+)?$/.test(s);
  const knownNode = (n: string | undefined) => n !== undefined && nodes.includes(n);
  switch (verb) {
    case 'delay':
      return isNum(obj) && action === undefined ? undefined : "usage: 'delay <seconds>'";
    case 'skip-round':
      if (obj !== 'crm' && obj !== 'lrm') return "usage: 'skip-round crm|lrm [<rounds>]'";
      return action === undefined || /^\d+$/.test(action) ? undefined : "rounds must be a number";
    case 'power':
    case 'network':
      if (!knownNode(obj)) return `unknown node '${obj ?? ''}'`;
      return action === 'on' || action === 'off' ? undefined : `unknown action '${action ?? ''}' (on|off)`;
    case 'reboot':
    case 'shutdown':
    case 'restart-lrm':
      return knownNode(obj) ? undefined : `unknown node '${obj ?? ''}'`;
    case 'cfs':
      if (!knownNode(obj)) return `unknown node '${obj ?? ''}'`;
      if (action !== 'rw' && action !== 'update') return `unknown cfs action '${action ?? ''}' (rw|update)`;
      return params[0] === 'work' || params[0] === 'fail' ? undefined : `unknown cfs command '${params[0] ?? ''}' (work|fail)`;
    case 'pve-manager-version':
      if (!knownNode(obj)) return `unknown node '${obj ?? ''}'`;
      return action === 'set' && params[0] !== undefined ? undefined : "usage: 'pve-manager-version <node> set <version>'";
    case 'crm':
      if (!knownNode(obj)) return `unknown node '${obj ?? ''}'`;
      switch (action) {
        case 'stop': case 'start': case 'enable-node-maintenance': case 'disable-node-maintenance': case 'arm-ha':
          return undefined;
        case 'disarm-ha':
          return params[0] === 'freeze' || params[0] === 'ignore' ? undefined : `unknown disarm mode '${params[0] ?? ''}' (freeze|ignore)`;
        default:
          return `unknown crm action '${action ?? ''}'`;
      }
    case 'service': {
      if (obj === undefined || !/^(vm|ct|fa):\d+$/.test(obj)) return `invalid service id '${obj ?? ''}'`;
      if (action !== undefined && SERVICE_STATES.has(action)) return undefined;
      switch (action) {
        case 'migrate': case 'relocate': case 'manual-migrate':
          return knownNode(params[0]) ? undefined : `unknown node '${params[0] ?? ''}'`;
        case 'stop':
          return isNum(params[0]) ? undefined : "usage: 'service <sid> stop <timeout>'";
        case 'add':
          if (!knownNode(params[0])) return `unknown node '${params[0] ?? ''}'`;
          return undefined;
        case 'delete': case 'lock': case 'unlock':
          return undefined;
        case 'set-static-stats':
        case 'set-dynamic-stats': {
          const keys = action === 'set-static-stats' ? ['maxcpu', 'maxmem'] : ['cpu', 'mem'];
          if (params.length === 0 || params.length % 2) return 'expected <key> <value> pairs';
          for (let i = 0; i < params.length; i += 2) {
            if (!keys.includes(params[i]!)) return `unknown stat '${params[i]}' (${keys.join('|')})`;
            if (!isNum(params[i + 1])) return `value of '${params[i]}' must be a number`;
          }
          return undefined;
        }
        default:
          return `unknown service action '${action ?? ''}'`;
      }
    }
    default:
      return `unknown command '${verb ?? ''}'`;
  }
}
