import { SimError } from './errors';

/**
 * The cmdlist language (spec §2) as typed commands. One parser ({@link parseCommand}) serves
 * both the up-front check of a case and the runner, so a command that passes the check never
 * fails to parse when it runs.
 *
 * Syntax, decided per command from what the reference accepts:
 * - words are separated by whitespace; trailing whitespace is ignored, leading whitespace is
 *   refused (the reference splits it into an empty command word);
 * - `delay` and `skip-round` must match exactly (the reference matches them with an anchored
 *   pattern; anything else falls through to the hardware commands and aborts the run);
 * - the other commands ignore extra trailing words, as the reference does;
 * - nodes must exist in `hardware_status`, service ids must be `vm|ct|fa:<digits>`;
 * - integers (`delay`, `skip-round`, the stop timeout) are decimal digits (`delay` and
 *   `skip-round` at most 2^53−1, where a count still counts); stats values are
 *   decimal numbers, negative and out-of-range values included (the HA core reports them).
 */
export type Command =
  | { kind: 'delay'; seconds: number }
  | { kind: 'skip-round'; daemon: 'crm' | 'lrm'; rounds: number }
  | { kind: 'power' | 'network'; node: string; on: boolean }
  | { kind: 'reboot' | 'shutdown' | 'restart-lrm'; node: string }
  | { kind: 'cfs'; node: string; what: 'rw' | 'update'; works: boolean }
  | { kind: 'pve-manager-version'; node: string; version: string }
  | { kind: 'crm'; node: string; action: CrmAction }
  | { kind: 'crm-disarm'; node: string; mode: 'freeze' | 'ignore' }
  | { kind: 'service-state'; sid: string; state: ServiceStateWord }
  | { kind: 'service-move'; sid: string; task: 'migrate' | 'relocate'; node: string }
  | { kind: 'service-stop'; sid: string; timeout: string }
  | { kind: 'service-add'; sid: string; node: string; state: ServiceStateWord; running: number }
  | { kind: 'service-delete'; sid: string }
  | { kind: 'service-lock' | 'service-unlock'; sid: string; lock: string | undefined }
  | { kind: 'service-stats'; sid: string; which: 'static' | 'dynamic'; values: Array<[StatKey, number]> }
  | { kind: 'service-manual-migrate'; sid: string; node: string }
  | { kind: 'node-stats'; node: string; values: Array<[NodeStatKey, number]> }
  | { kind: 'node-noise'; node: string; values: Array<[NodeNoiseKey, number]> };

type CrmAction = 'stop' | 'start' | 'enable-node-maintenance' | 'disable-node-maintenance' | 'arm-ha';
export type ServiceStateWord = 'started' | 'disabled' | 'stopped' | 'ignored' | 'enabled';
type StatKey = 'maxcpu' | 'maxmem' | 'cpu' | 'mem' | 'memhost';
/** `node <node> set-dynamic-stats` keys: base load (cores, MiB) and PSI some avg10 (percent). */
type NodeStatKey = 'cpu' | 'mem' | 'pressurecpusome' | 'pressurememorysome';
/** `node <node> set-noise` keys: amplitude of the random walk (cores, MiB). */
type NodeNoiseKey = 'cpu' | 'mem';

export type ParseResult = { ok: true; command: Command } | { ok: false; problem: string };

/** Service states `service <sid> <state>` and `service <sid> add <node> <state>` may set. */
export const SERVICE_STATE_WORDS: readonly ServiceStateWord[] = [
  'started',
  'disabled',
  'stopped',
  'ignored',
  'enabled',
];
/** Service ids the simulator runs (the reference dies "implement me" on others). */
export const SID_PATTERN = /^(vm|ct|fa):\d+$/;

const CRM_ACTIONS: readonly string[] = [
  'stop',
  'start',
  'enable-node-maintenance',
  'disable-node-maintenance',
  'arm-ha',
];
const DIGITS = /^\d+$/;
const DECIMAL = /^[+-]?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][+-]?\d+)?$/;
const STAT_KEYS = { static: ['maxcpu', 'maxmem'], dynamic: ['cpu', 'mem', 'memhost'] } as const;
const NODE_STAT_KEYS: readonly NodeStatKey[] = ['cpu', 'mem', 'pressurecpusome', 'pressurememorysome'];
const NODE_NOISE_KEYS: readonly NodeNoiseKey[] = ['cpu', 'mem'];
/** Largest node base load or noise amplitude a command accepts (cores or MiB): 2^40. */
const MAX_NODE_LOAD = 2 ** 40;

/** Parses one cmdlist command; `nodes` are the case's node names. */
export function parseCommand(text: string, nodes: ReadonlySet<string> | readonly string[]): ParseResult {
  const known = nodes instanceof Set ? (nodes as ReadonlySet<string>) : new Set(nodes as readonly string[]);
  const fail = (problem: string): ParseResult => ({ ok: false, problem });
  const ok = (command: Command): ParseResult => ({ ok: true, command });
  if (typeof text !== 'string') return fail('expected a command string');
  if (text.trim() === '') return fail('empty command');
  if (/^\s/.test(text)) return fail('leading whitespace');
  const words = text.trimEnd().split(/\s+/);
  const [verb, obj, action, ...params] = words as [string, string | undefined, string | undefined, ...string[]];
  const node = (n: string | undefined): string | undefined => (n !== undefined && known.has(n) ? n : undefined);
  const unknownNode = (n: string | undefined) => fail(n === undefined ? 'missing node' : `unknown node '${n}'`);

  switch (verb) {
    case 'delay':
      if (obj === undefined || !DIGITS.test(obj) || words.length !== 2) return fail("usage: 'delay <seconds>'");
      if (!Number.isSafeInteger(Number(obj))) return fail(`seconds must be at most ${Number.MAX_SAFE_INTEGER}`);
      return ok({ kind: 'delay', seconds: Number(obj) });
    case 'skip-round': {
      if ((obj !== 'crm' && obj !== 'lrm') || words.length > 3) return fail("usage: 'skip-round crm|lrm [<rounds>]'");
      if (action !== undefined && !DIGITS.test(action)) return fail('rounds must be a number');
      if (action !== undefined && !Number.isSafeInteger(Number(action)))
        return fail(`rounds must be at most ${Number.MAX_SAFE_INTEGER}`);
      return ok({ kind: 'skip-round', daemon: obj, rounds: action === undefined ? 1 : Number(action) });
    }
    case 'power':
    case 'network': {
      const n = node(obj);
      if (n === undefined) return unknownNode(obj);
      if (action !== 'on' && action !== 'off') return fail(`unknown action '${action ?? ''}' (on|off)`);
      return ok({ kind: verb, node: n, on: action === 'on' });
    }
    case 'reboot':
    case 'shutdown':
    case 'restart-lrm': {
      const n = node(obj);
      return n === undefined ? unknownNode(obj) : ok({ kind: verb, node: n });
    }
    case 'cfs': {
      const n = node(obj);
      if (n === undefined) return unknownNode(obj);
      if (action !== 'rw' && action !== 'update') return fail(`unknown cfs action '${action ?? ''}' (rw|update)`);
      const v = params[0];
      if (v !== 'work' && v !== 'fail') return fail(`unknown cfs command '${v ?? ''}' (work|fail)`);
      return ok({ kind: 'cfs', node: n, what: action, works: v === 'work' });
    }
    case 'pve-manager-version': {
      const n = node(obj);
      if (n === undefined) return unknownNode(obj);
      if (action !== 'set' || params[0] === undefined) return fail("usage: 'pve-manager-version <node> set <version>'");
      return ok({ kind: 'pve-manager-version', node: n, version: params[0] });
    }
    case 'crm': {
      const n = node(obj);
      if (n === undefined) return unknownNode(obj);
      if (action === 'disarm-ha') {
        const mode = params[0];
        if (mode !== 'freeze' && mode !== 'ignore') return fail(`unknown disarm mode '${mode ?? ''}' (freeze|ignore)`);
        return ok({ kind: 'crm-disarm', node: n, mode });
      }
      if (action === undefined || !CRM_ACTIONS.includes(action)) return fail(`unknown crm action '${action ?? ''}'`);
      return ok({ kind: 'crm', node: n, action: action as CrmAction });
    }
    case 'service':
      return parseServiceCommand(obj, action, params, node, unknownNode);
    case 'node': {
      const n = node(obj);
      if (n === undefined) return unknownNode(obj);
      if (action === 'set-dynamic-stats') {
        const values = parseNodePairs(params, NODE_STAT_KEYS);
        return typeof values === 'string' ? fail(values) : ok({ kind: 'node-stats', node: n, values });
      }
      if (action === 'set-noise') {
        const values = parseNodePairs(params, NODE_NOISE_KEYS);
        return typeof values === 'string' ? fail(values) : ok({ kind: 'node-noise', node: n, values });
      }
      return fail(`unknown node action '${action ?? ''}' (set-dynamic-stats|set-noise)`);
    }
    default:
      return fail(`unknown command '${verb}'`);
  }
}

/**
 * `<key> <value>` pairs of a node command: keys from `keys`, values decimal numbers >= 0
 * (cores, MiB, or a percentage <= 100 for the pressure keys). Returns the problem as text.
 */
function parseNodePairs<K extends string>(params: string[], keys: readonly K[]): Array<[K, number]> | string {
  if (params.length === 0 || params.length % 2) return `expected <key> <value> pairs (${keys.join('|')})`;
  const values: Array<[K, number]> = [];
  for (let i = 0; i < params.length; i += 2) {
    const key = params[i]!;
    const raw = params[i + 1]!;
    if (!(keys as readonly string[]).includes(key)) return `unknown stat '${key}' (${keys.join('|')})`;
    const v = DECIMAL.test(raw) ? Number(raw) : NaN;
    const max = key.startsWith('pressure') ? 100 : MAX_NODE_LOAD;
    if (!Number.isFinite(v) || v < 0 || v > max)
      return `value of '${key}' must be a number from 0 to ${max}, got '${raw}'`;
    values.push([key as K, v]);
  }
  return values;
}

function parseServiceCommand(
  sid: string | undefined,
  action: string | undefined,
  params: string[],
  node: (n: string | undefined) => string | undefined,
  unknownNode: (n: string | undefined) => ParseResult,
): ParseResult {
  const fail = (problem: string): ParseResult => ({ ok: false, problem });
  const ok = (command: Command): ParseResult => ({ ok: true, command });
  if (sid === undefined || !SID_PATTERN.test(sid)) return fail(`invalid service id '${sid ?? ''}' (vm|ct|fa:<number>)`);
  if (action !== undefined && (SERVICE_STATE_WORDS as readonly string[]).includes(action)) {
    return ok({ kind: 'service-state', sid, state: action as ServiceStateWord });
  }
  switch (action) {
    case 'migrate':
    case 'relocate': {
      const n = node(params[0]);
      return n === undefined ? unknownNode(params[0]) : ok({ kind: 'service-move', sid, task: action, node: n });
    }
    case 'manual-migrate': {
      const n = node(params[0]);
      return n === undefined ? unknownNode(params[0]) : ok({ kind: 'service-manual-migrate', sid, node: n });
    }
    case 'stop': {
      const timeout = params[0];
      if (timeout === undefined || !DIGITS.test(timeout))
        return fail("usage: 'service <sid> stop <timeout>' (whole seconds, 0 = hard stop)");
      if (!Number.isSafeInteger(Number(timeout))) return fail(`timeout must be at most ${Number.MAX_SAFE_INTEGER}`);
      return ok({ kind: 'service-stop', sid, timeout });
    }
    case 'add': {
      const [n, state = 'started', running = '0'] = params;
      const target = node(n);
      if (target === undefined) return unknownNode(n);
      if (!(SERVICE_STATE_WORDS as readonly string[]).includes(state)) {
        return fail(`unknown service state '${state}' (${SERVICE_STATE_WORDS.join('|')})`);
      }
      if (running !== '0' && running !== '1') return fail(`running flag must be 0 or 1, got '${running}'`);
      return ok({ kind: 'service-add', sid, node: target, state: state as ServiceStateWord, running: Number(running) });
    }
    case 'delete':
      return ok({ kind: 'service-delete', sid });
    case 'lock':
    case 'unlock':
      return ok({ kind: action === 'lock' ? 'service-lock' : 'service-unlock', sid, lock: params[0] });
    case 'set-static-stats':
    case 'set-dynamic-stats': {
      const which = action === 'set-static-stats' ? 'static' : 'dynamic';
      const keys: readonly string[] = STAT_KEYS[which];
      if (params.length === 0 || params.length % 2) return fail(`expected <key> <value> pairs (${keys.join('|')})`);
      const values: Array<[StatKey, number]> = [];
      for (let i = 0; i < params.length; i += 2) {
        const key = params[i]!;
        const raw = params[i + 1]!;
        if (!keys.includes(key)) return fail(`unknown stat '${key}' (${keys.join('|')})`);
        if (!DECIMAL.test(raw)) return fail(`value of '${key}' must be a number, got '${raw}'`);
        values.push([key as StatKey, Number(raw)]);
      }
      return ok({ kind: 'service-stats', sid, which, values });
    }
    default:
      return fail(`unknown service action '${action ?? ''}'`);
  }
}

/** The problem with one cmdlist command as text, or undefined when it is well-formed. */
export function validateCommand(cmd: string, nodes: ReadonlySet<string> | readonly string[]): string | undefined {
  const res = parseCommand(cmd, nodes);
  return res.ok ? undefined : res.problem;
}

/** Parses a command or throws {@link SimError} `bad-command` naming it. */
export function parseCommandOrThrow(cmd: string, nodes: ReadonlySet<string> | readonly string[]): Command {
  const res = parseCommand(cmd, nodes);
  if (!res.ok) throw new SimError('bad-command', `invalid command '${cmd}': ${res.problem}`);
  return res.command;
}
