import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import { HA_SERVICE_STATES, type DatacenterSettings, type ManagerStatus } from '@poise/env';
import { MAX_STAT_VALUE, MIN_NODE_CAPACITY, compareNames } from '@poise/usage';
import { AUTO_REBALANCE_PERCENT_RANGE, BUILTIN_REGISTRY } from '@poise/ha';
import { SimError } from './errors';
import { SERVICE_STATE_WORDS, parseCommand } from './commands';
import {
  NAMES_SHOWN,
  checkCommandServices,
  checkDelays,
  commandSids,
  rulesWarnings,
  unknownServices,
  type CaseCommand,
  type CaseNames,
} from './case-checks';
import { MAX_SIM_TIME } from './round-model';
import { expectDirectory, readInputFile, statPath } from './files';
import { FileCheck, describe } from './check';
import {
  PRESSURE_MODEL_KINDS,
  parseLoadPressureObject,
  type LoadPressureOptions,
  type PressureModelKind,
} from './pressure/config';
import { JsonSyntaxError, parseStrictJson, type JsonValue } from './json';
import { PRESET_KEY, REFERENCE_CRS_KEYS, type PolicyRegistry } from '@poise/policy';

/** One node of `hardware_status`. */
export interface HardwareNode {
  power: string;
  network: string;
  maxcpu?: number;
  maxmem?: number;
  'pve-manager-version'?: string;
  cfs?: { rw?: boolean | number | string; update?: boolean | number | string };
  shutdown?: string | null;
  [key: string]: unknown;
}

/**
 * A test case: the inputs of one simulation, with the reference's defaults applied. Every map
 * is a null-prototype object, so node names and service ids such as `toString` or
 * `__proto__` are plain keys.
 */
export interface CaseInput {
  name: string;
  cmdlist: string[][];
  hardwareStatus: Record<string, HardwareNode>;
  serviceConfig: Record<string, Record<string, unknown>>;
  managerStatus: ManagerStatus;
  rulesConfig: string;
  groups: string;
  datacenterCfg: DatacenterSettings;
  staticServiceStats: Record<string, { maxcpu: number; maxmem: number }>;
  dynamicServiceStats: Record<string, { cpu: number; mem: number; memhost?: number }>;
  /** Per node, sid → running flag (`service_status_<node>`). */
  serviceStatus: Record<string, Record<string, number>>;
  /**
   * `guest_config` (optional): sid → the guest's configuration as the PVE API returns it
   * (`{"ide2": "local:iso/d.iso,media=cdrom"}`). A guest whose configuration prevents the
   * migration fails it in the simulator, and the balancer's migratability check reads it.
   */
  guestConfig?: Record<string, Record<string, string | number | boolean>>;
  /** `sim_options` (optional): the noise seed and the time limit. */
  simOptions?: SimOptions;
  /**
   * What the loader accepted as the reference would and found suspect, one message per
   * problem naming the file and field: a rule naming a node or service that does not exist,
   * stats, running flags or guest configurations of services that are not configured (nor
   * added by a command), and such. They never reach the simulation's log (the reference loads
   * these files silently); `poise-sim` prints them on stderr.
   */
  warnings?: readonly string[];
}

/** The optional case file `sim_options`: `{"seed": 1, "max-time": 36000}`. */
export interface SimOptions {
  /** Seed of the node noise (`node <node> set-noise`), an integer 0..2^32−1 (default 0). */
  seed?: number;
  /** The simulation aborts once simulated time passes this many seconds (default 10,000, the reference's). */
  maxTime?: number;
  /**
   * Where node pressure comes from (`pressure-model`): `scripted` (the default) reports what the
   * commands set (`node <n> set-dynamic-stats pressurecpusome …`); `load` computes it from the
   * load ({@link loadPressure}).
   */
  pressureModel?: PressureModelKind;
  /** The load pressure model's settings (`load-pressure`, normalised), with `pressure-model` `load`. */
  loadPressure?: LoadPressureOptions;
}

/** Options of {@link loadCase}. */
export interface LoadOptions {
  /** Largest file accepted, bytes (default `MAX_INPUT_FILE_BYTES`, 64 MiB). */
  maxFileBytes?: number;
  /**
   * The balancer's policy plug-ins, whose keys `datacenter.cfg` `crs` may set (default
   * `BUILTIN_REGISTRY` of `@poise/ha`, the built-in variants).
   */
  registry?: PolicyRegistry;
}

const GiB = 1024 ** 3;
const MiB = 1024 ** 2;

/** Default node capacity when `hardware_status` is absent. */
const DEFAULT_NODE_MAXCPU = 24;
const DEFAULT_NODE_MAXMEM = 131072 * MiB;
/** Default static stats of a service without `static_service_stats`. */
const DEFAULT_SERVICE_MAXCPU = 4.0;
const DEFAULT_SERVICE_MAXMEM = 4 * GiB;
/** Default measured usage of a service without `dynamic_service_stats`. */
const DEFAULT_SERVICE_CPU = 2.0;
const DEFAULT_SERVICE_MEM = 2 * GiB;

/**
 * Node names: 1 to 63 letters, digits, `-` and `_`, not starting with `-` (a Proxmox VE node
 * name, plus `_`). Anything else (a space, `/`, `:`, `,`) would break commands, log ids, lock
 * names or the rules' node lists.
 */
const NODE_NAME_PATTERN = /^[A-Za-z0-9_][A-Za-z0-9_-]{0,62}$/;

/** Keys of one node in `hardware_status`. */
const HARDWARE_KEYS = ['power', 'network', 'maxcpu', 'maxmem', 'pve-manager-version', 'cfs', 'shutdown'];
/** Keys of one service in `service_config`. */
const SERVICE_KEYS = ['node', 'state', 'group', 'failback', 'max_restart', 'max_relocate', 'comment', 'lock'];
/**
 * The balancer's variant keys of a registry's plug-ins (`ha-auto-rebalance-backoff`, …, and an
 * out-of-tree plug-in's), and the preset. Their values are judged by the HA core at run time (a
 * bad one is logged naming the key and that stage is off), so the loader only checks that each
 * is a JSON scalar.
 */
function variantCrsKeys(registry: PolicyRegistry = BUILTIN_REGISTRY): string[] {
  return [PRESET_KEY, ...registry.keys().map((k) => k.key)];
}
/** Every `crs` key a case may set: the reference's and a registry's variant keys. */
export function crsKeys(registry: PolicyRegistry = BUILTIN_REGISTRY): string[] {
  return [...REFERENCE_CRS_KEYS, ...variantCrsKeys(registry)];
}
/** The variant keys of the built-in plug-ins and the preset (see `variantCrsKeys`). */
export const VARIANT_CRS_KEYS: readonly string[] = variantCrsKeys();
/** Every `crs` key a case may set with the built-in plug-ins (see {@link crsKeys}). */
export const CRS_KEYS: readonly string[] = crsKeys();
/** Keys of `sim_options`. */
const SIM_OPTION_KEYS = ['seed', 'max-time', 'pressure-model', 'load-pressure'];
/** Largest `sim_options` seed (a 32-bit unsigned integer). */
export const MAX_SEED = 2 ** 32 - 1;
const BALANCER_METHODS = ['bruteforce', 'topsis'];
const NODE_STATES = ['online', 'maintenance', 'unknown', 'fence', 'gone'];

/**
 * Reads and parses a JSON file of the case; undefined when absent. `keepMember` (see
 * `parseStrictJson`) gets each top-level key with the file's checks.
 */
function readJson(
  dir: string,
  file: string,
  options: LoadOptions,
  keepMember?: (key: string, check: FileCheck) => boolean,
): { value: JsonValue; check: FileCheck } | undefined {
  const path = join(dir, file);
  const text = readInputFile(path, { maxBytes: options.maxFileBytes });
  if (text === undefined) return undefined;
  const check = new FileCheck(path);
  try {
    return { value: parseStrictJson(text, keepMember ? { keepMember: (key) => keepMember(key, check) } : {}), check };
  } catch (err) {
    if (err instanceof JsonSyntaxError) {
      throw new SimError(
        'bad-case',
        `invalid JSON in '${path}' (line ${err.line}, column ${err.column}): ${err.reason}`,
        { cause: err },
      );
    }
    throw err;
  }
}

function nullObject<V>(): Record<string, V> {
  return Object.create(null) as Record<string, V>;
}

/**
 * Loads a test-case directory (the reference tester's format, spec §1.2) and checks it: every
 * file must be a regular UTF-8 file without a byte order mark and within the size limit; JSON
 * files are parsed strictly (a duplicate key is an error); fields must have the types and
 * values documented in the package README; every command must parse and apply to the
 * services there at its turn, and no delay may outlast the time limit. Throws
 * {@link SimError} `bad-case` naming the file and field. Names the reference loads silently
 * although nothing has them (a rule's unknown node, stats of a service that is not
 * configured, …) are reported in {@link CaseInput.warnings}. Never writes.
 */
export function loadCase(dir: string, name = dir, options: LoadOptions = {}): CaseInput {
  expectDirectory(dir, 'a case directory');
  const cmdlistPath = join(dir, 'cmdlist');
  if (!statPath(cmdlistPath)) throw new SimError('bad-case', `missing '${cmdlistPath}'`);
  const warnings: string[] = [];

  const hardwareStatus = loadHardware(dir, options);
  const nodes = new Set(Object.keys(hardwareStatus));
  const { lists: cmdlist, commands } = loadCmdlist(dir, options, nodes);
  const serviceConfig = loadServiceConfig(dir, options, nodes);
  checkCommandServices(commands, Object.keys(serviceConfig), warnings);
  // every service the run can have: configured, or added by a command
  const services: ReadonlySet<string> = new Set([...Object.keys(serviceConfig), ...commandSids(commands)]);
  const managerStatus = loadManagerStatus(dir, options);
  const datacenterCfg = loadDatacenterCfg(dir, options);

  const staticServiceStats =
    (loadStats(dir, 'static_service_stats', ['maxcpu', 'maxmem'], options, services, warnings) as
      | CaseInput['staticServiceStats']
      | undefined) ??
    defaultStats(Object.keys(serviceConfig), { maxcpu: DEFAULT_SERVICE_MAXCPU, maxmem: DEFAULT_SERVICE_MAXMEM });
  const dynamicServiceStats =
    (loadStats(dir, 'dynamic_service_stats', ['cpu', 'mem', 'memhost'], options, services, warnings) as
      | CaseInput['dynamicServiceStats']
      | undefined) ??
    defaultStats(Object.keys(staticServiceStats), { cpu: DEFAULT_SERVICE_CPU, mem: DEFAULT_SERVICE_MEM });
  const serviceStatus = loadServiceStatus(dir, options, { nodes, services }, warnings);
  const guestConfig = loadGuestConfig(dir, options, services, warnings);
  const simOptions = loadSimOptions(dir, options, nodes);
  checkDelays(commands, simOptions?.maxTime ?? MAX_SIM_TIME);
  if (simOptions?.pressureModel === 'load') refuseScriptedPressure(commands);

  const rulesConfig = readInputFile(join(dir, 'rules_config'), { maxBytes: options.maxFileBytes }) ?? '';
  const groups = readInputFile(join(dir, 'groups'), { maxBytes: options.maxFileBytes }) ?? '';
  const serviceGroups = new Map<string, string>();
  for (const sid of Object.keys(serviceConfig)) {
    // the reference's reading: a missing, empty or '0' group is no group
    const group = serviceConfig[sid]!.group;
    if (typeof group === 'string' && group !== '' && group !== '0') serviceGroups.set(sid, group);
  }
  warnings.push(
    ...rulesWarnings(
      { rules: join(dir, 'rules_config'), groups: join(dir, 'groups'), serviceConfig: join(dir, 'service_config') },
      { rules: rulesConfig, groups },
      { nodes, services },
      serviceGroups,
    ),
  );
  return {
    name,
    cmdlist,
    hardwareStatus,
    serviceConfig,
    managerStatus,
    rulesConfig,
    groups,
    datacenterCfg,
    staticServiceStats,
    dynamicServiceStats,
    serviceStatus,
    ...(guestConfig ? { guestConfig } : {}),
    ...(simOptions ? { simOptions } : {}),
    warnings,
  };
}

/**
 * `service_status_<node>` of every node: sid → running flag. Flags of services that are not
 * there are skipped ({@link readServiceFile}); a file of a node that does not exist (never
 * read) is a warning.
 */
function loadServiceStatus(
  dir: string,
  options: LoadOptions,
  names: CaseNames,
  warnings: string[],
): CaseInput['serviceStatus'] {
  const serviceStatus = nullObject<Record<string, number>>();
  for (const node of names.nodes) {
    const file = readServiceFile(dir, `service_status_${node}`, options, names.services, warnings);
    const flags = nullObject<number>();
    if (file) {
      const obj = file.check.object(file.value, []);
      for (const sid of Object.keys(obj)) {
        file.check.flag(obj[sid], [sid]);
        const v = obj[sid];
        flags[sid] = v === true || v === 1 || v === '1' ? 1 : 0;
      }
    }
    serviceStatus[node] = flags;
  }
  for (const entry of readdirSync(dir).sort(compareNames)) {
    const node = entry.startsWith(SERVICE_STATUS_PREFIX) ? entry.slice(SERVICE_STATUS_PREFIX.length) : undefined;
    if (node !== undefined && !names.nodes.has(node)) {
      warnings.push(`'${join(dir, entry)}': node '${node}' does not exist in hardware_status; the file is not read`);
    }
  }
  return serviceStatus;
}

/** The per-node running flags' file name, before the node's name. */
const SERVICE_STATUS_PREFIX = 'service_status_';

/**
 * `guest_config`: sid → { config key: string | number | boolean }. The values are what the
 * PVE API returns (property strings); they are judged when a migration runs, not here.
 */
function loadGuestConfig(
  dir: string,
  options: LoadOptions,
  services: ReadonlySet<string>,
  warnings: string[],
): CaseInput['guestConfig'] {
  const file = readServiceFile(dir, 'guest_config', options, services, warnings);
  if (!file) return undefined;
  const check: FileCheck = file.check;
  const all = check.object(file.value, []);
  const out = nullObject<Record<string, string | number | boolean>>();
  for (const sid of Object.keys(all)) {
    const entry = check.object(all[sid], [sid]);
    const config = nullObject<string | number | boolean>();
    for (const key of Object.keys(entry)) {
      const v = entry[key];
      if (!/^[a-z][a-z0-9_-]*$/.test(key))
        check.fail([sid, key], `invalid config key '${key}' (lower-case letters, digits, '-' and '_')`);
      if (typeof v !== 'string' && typeof v !== 'number' && typeof v !== 'boolean') {
        check.fail([sid, key], `expected a string, number or boolean, got ${describe(v)}`);
      }
      if (typeof v === 'number' && !Number.isFinite(v))
        check.fail([sid, key], `expected a finite number, got ${describe(v)}`);
      config[key] = v;
    }
    out[sid] = config;
  }
  return out;
}

/**
 * Under the load pressure model a node's pressure is computed, never scripted: a command setting
 * `pressurecpusome` or `pressurememorysome` is refused, naming it. Reads the commands as
 * {@link loadCmdlist} parsed them (every one parsed, in list order), not parsing them again.
 */
function refuseScriptedPressure(commands: readonly CaseCommand[]): void {
  for (const { at, command } of commands) {
    if (command.kind === 'node-stats' && command.values.some(([key]) => key.startsWith('pressure'))) {
      throw new SimError(
        'bad-case',
        `${at}: scripted pressure, but sim_options 'pressure-model' is 'load' (the model computes every node's pressure)`,
      );
    }
  }
}

/**
 * `sim_options`: `seed` an integer 0..2^32−1, `max-time` a whole number of seconds from 1 to
 * 2^53−1, `pressure-model` `scripted` | `load`, `load-pressure` (only with `load`) its settings.
 */
function loadSimOptions(dir: string, options: LoadOptions, nodes: ReadonlySet<string>): SimOptions | undefined {
  const file = readJson(dir, 'sim_options', options);
  if (!file) return undefined;
  const check: FileCheck = file.check;
  const o = check.object(file.value, []);
  check.keys(o, SIM_OPTION_KEYS, []);
  const out: SimOptions = {};
  if (o.seed !== undefined) {
    if (typeof o.seed !== 'number' || !Number.isInteger(o.seed) || o.seed < 0 || o.seed > MAX_SEED) {
      check.fail(['seed'], `expected an integer from 0 to ${MAX_SEED}, got ${describe(o.seed)}`);
    }
    out.seed = o.seed;
  }
  if (o['max-time'] !== undefined) {
    const t = o['max-time'];
    if (typeof t !== 'number' || !Number.isSafeInteger(t) || t < 1)
      check.fail(
        ['max-time'],
        `expected a whole number of seconds from 1 to ${Number.MAX_SAFE_INTEGER}, got ${describe(t)}`,
      );
    out.maxTime = t;
  }
  if (o['pressure-model'] !== undefined)
    out.pressureModel = check.oneOf(o['pressure-model'], PRESSURE_MODEL_KINDS, ['pressure-model']) as PressureModelKind;
  if (o['load-pressure'] !== undefined && out.pressureModel !== 'load') {
    check.fail(['load-pressure'], "the load pressure model's settings need 'pressure-model': 'load'");
  }
  if (out.pressureModel === 'load')
    out.loadPressure = parseLoadPressureObject(check, o['load-pressure'], ['load-pressure'], nodes);
  return out;
}

/** The command lists, and every command parsed with where it is (for the cross-file checks). */
function loadCmdlist(
  dir: string,
  options: LoadOptions,
  nodes: ReadonlySet<string>,
): { lists: string[][]; commands: CaseCommand[] } {
  const file = readJson(dir, 'cmdlist', options)!;
  const value = file.value;
  const check: FileCheck = file.check;
  if (!Array.isArray(value)) check.fail([], `expected an array of command lists, got ${describe(value)}`);
  const at = (...index: number[]) => `'${check.path}' ${index.map((i) => `[${i}]`).join('')}`;
  const commands: CaseCommand[] = [];
  const lists = value.map((list, i) => {
    if (!Array.isArray(list))
      throw new SimError('bad-case', `${at(i)}: expected an array of commands, got ${describe(list)}`);
    return list.map((cmd, j) => {
      if (typeof cmd !== 'string')
        throw new SimError('bad-case', `${at(i, j)}: expected a command string, got ${describe(cmd)}`);
      // the runner uses the same parser, so a command that passes here never fails to parse
      const parsed = parseCommand(cmd, nodes);
      if (!parsed.ok) throw new SimError('bad-case', `${at(i, j)} '${cmd}': ${parsed.problem}`);
      commands.push({ at: `${at(i, j)} '${cmd}'`, command: parsed.command });
      return cmd;
    });
  });
  return { lists, commands };
}

function loadHardware(dir: string, options: LoadOptions): Record<string, HardwareNode> {
  const hardwareStatus = nullObject<HardwareNode>();
  const file = readJson(dir, 'hardware_status', options);
  if (!file) {
    for (const n of ['node1', 'node2', 'node3']) {
      hardwareStatus[n] = { power: 'off', network: 'off', maxcpu: DEFAULT_NODE_MAXCPU, maxmem: DEFAULT_NODE_MAXMEM };
    }
    return hardwareStatus;
  }
  const check: FileCheck = file.check;
  const hw = check.object(file.value, []);
  for (const node of Object.keys(hw)) {
    if (!NODE_NAME_PATTERN.test(node)) {
      check.fail([node], `invalid node name '${node}' (1-63 letters, digits, '-' and '_', not starting with '-')`);
    }
    const d = check.object(hw[node], [node]);
    check.keys(d, HARDWARE_KEYS, [node]);
    check.oneOf(d.power, ['on', 'off'], [node, 'power']);
    check.oneOf(d.network, ['on', 'off'], [node, 'network']);
    // a node's capacity: at least one core and one byte (the scheduler divides by it), at most
    // what the usage model accepts (the scheduler would fall back to basic every round)
    for (const [key, unit] of [
      ['maxcpu', 'cores'],
      ['maxmem', 'bytes'],
    ] as const) {
      const v = d[key];
      if (v !== undefined && (typeof v !== 'number' || !(v >= MIN_NODE_CAPACITY && v <= MAX_STAT_VALUE))) {
        check.fail([node, key], `expected a number of ${unit} from ${MIN_NODE_CAPACITY} to 2^64, got ${describe(v)}`);
      }
    }
    if (d['pve-manager-version'] !== undefined) check.string(d['pve-manager-version'], [node, 'pve-manager-version']);
    if (d.cfs !== undefined) {
      const cfs = check.object(d.cfs, [node, 'cfs']);
      check.keys(cfs, ['rw', 'update'], [node, 'cfs']);
      for (const k of Object.keys(cfs)) check.flag(cfs[k], [node, 'cfs', k]);
    }
    if (d.shutdown !== undefined && d.shutdown !== null)
      check.oneOf(d.shutdown, ['shutdown', 'reboot'], [node, 'shutdown']);
    hardwareStatus[node] = d as unknown as HardwareNode;
  }
  if (Object.keys(hardwareStatus).length === 0) check.fail([], 'no nodes');
  return hardwareStatus;
}

function loadServiceConfig(
  dir: string,
  options: LoadOptions,
  nodes: ReadonlySet<string>,
): Record<string, Record<string, unknown>> {
  const serviceConfig = nullObject<Record<string, unknown>>();
  const file = readJson(dir, 'service_config', options);
  if (!file) {
    for (let i = 0; i < 6; i++) {
      const cd = nullObject<unknown>();
      cd.node = `node${(i % 3) + 1}`;
      serviceConfig[`vm:${101 + i}`] = cd;
    }
    return serviceConfig;
  }
  const check: FileCheck = file.check;
  const sc = check.object(file.value, []);
  for (const sid of Object.keys(sc)) {
    check.sid(sid, [sid]);
    const cd = check.object(sc[sid], [sid]);
    check.keys(cd, SERVICE_KEYS, [sid]);
    if (cd.node === undefined) check.fail([sid, 'node'], 'service without assigned node');
    check.node(cd.node, [sid, 'node'], nodes);
    if (cd.state !== undefined && cd.state !== '') check.oneOf(cd.state, SERVICE_STATE_WORDS, [sid, 'state']);
    if (cd.failback !== undefined) check.flag(cd.failback, [sid, 'failback']);
    if (cd.max_restart !== undefined) check.count(cd.max_restart, [sid, 'max_restart']);
    if (cd.max_relocate !== undefined) check.count(cd.max_relocate, [sid, 'max_relocate']);
    if (cd.group !== undefined) check.string(cd.group, [sid, 'group']);
    if (cd.comment !== undefined) check.string(cd.comment, [sid, 'comment'], false);
    if (cd.lock !== undefined) check.string(cd.lock, [sid, 'lock']);
    serviceConfig[sid] = cd;
  }
  return serviceConfig;
}

/**
 * `manager_status`: the CRM's persisted state. Known fields are checked; unknown keys are kept
 * and ignored, as the reference ignores them (e.g. `relocate_tried_nodes`).
 */
function loadManagerStatus(dir: string, options: LoadOptions): ManagerStatus {
  const file = readJson(dir, 'manager_status', options);
  if (!file) return nullObject<unknown>();
  const check: FileCheck = file.check;
  const ms = check.object(file.value, []);
  if (ms.master_node !== undefined) check.string(ms.master_node, ['master_node']);
  if (ms.timestamp !== undefined) check.number(ms.timestamp, ['timestamp']);
  if (ms.node_status !== undefined) {
    const ns = check.object(ms.node_status, ['node_status']);
    for (const node of Object.keys(ns)) {
      if (!NODE_NAME_PATTERN.test(node)) check.fail(['node_status', node], `invalid node name '${node}'`);
      check.oneOf(ns[node], NODE_STATES, ['node_status', node]);
    }
  }
  if (ms.service_status !== undefined) {
    const ss = check.object(ms.service_status, ['service_status']);
    for (const sid of Object.keys(ss)) {
      const f = ['service_status', sid];
      const sd = check.object(ss[sid], f);
      check.oneOf(sd.state, HA_SERVICE_STATES, [...f, 'state']);
      check.string(sd.node, [...f, 'node']);
      if (sd.uid !== undefined) check.string(sd.uid, [...f, 'uid']);
      if (sd.target !== undefined) check.string(sd.target, [...f, 'target']);
      if (sd.maintenance_node !== undefined) check.string(sd.maintenance_node, [...f, 'maintenance_node']);
      if (sd.running !== undefined) check.flag(sd.running, [...f, 'running']);
      if (sd.timeout !== undefined) check.count(sd.timeout, [...f, 'timeout']);
      if (sd.failed_nodes !== undefined) {
        if (!Array.isArray(sd.failed_nodes))
          check.fail([...f, 'failed_nodes'], `expected an array of node names, got ${describe(sd.failed_nodes)}`);
        sd.failed_nodes.forEach((n, i) => check.string(n, [...f, 'failed_nodes', `${i}`]));
      }
      if (sd.cmd !== undefined) {
        if (!Array.isArray(sd.cmd)) check.fail([...f, 'cmd'], `expected an array, got ${describe(sd.cmd)}`);
        sd.cmd.forEach((c, i) => {
          if (typeof c !== 'string' && !(typeof c === 'number' && Number.isFinite(c)))
            check.fail([...f, 'cmd', `${i}`], `expected a string or finite number, got ${describe(c)}`);
        });
      }
    }
  }
  if (ms.node_request !== undefined) {
    const nr = check.object(ms.node_request, ['node_request']);
    for (const node of Object.keys(nr)) {
      const req = check.object(nr[node], ['node_request', node]);
      if (req.maintenance !== undefined) check.flag(req.maintenance, ['node_request', node, 'maintenance']);
    }
  }
  if (ms.disarm !== undefined) {
    const disarm = check.object(ms.disarm, ['disarm']);
    check.oneOf(disarm.mode, ['freeze', 'ignore'], ['disarm', 'mode']);
    check.oneOf(disarm.state, ['disarming', 'disarmed'], ['disarm', 'state']);
  }
  return ms;
}

/**
 * `datacenter.cfg` (JSON): `ha` and `crs`. Values the reference reports at run time keep that
 * behaviour (an unknown `crs.ha` scheduler mode: warning, basic; an unknown
 * `ha.shutdown_policy`: error, conditional); values it would silently misread are refused
 * here (a flag that is not 0/1/true/false, an unknown balancer method, a negative threshold,
 * a hold duration that is not a whole number, unknown keys). The balancer's variant keys
 * (`variantCrsKeys`, those of `options.registry`) must be scalars; their values are judged by the HA core at run time,
 * which logs a bad one naming the key (so a scenario can show that log).
 */
function loadDatacenterCfg(dir: string, options: LoadOptions): DatacenterSettings {
  const file = readJson(dir, 'datacenter.cfg', options);
  if (!file) return { ha: nullObject<unknown>(), crs: nullObject<unknown>() };
  const check: FileCheck = file.check;
  const dc = check.object(file.value, []);
  check.keys(dc, ['ha', 'crs', 'max_workers'], []);
  // PVE's datacenter.cfg: tasks (migrations) a node runs at once, an integer ≥ 1 (default 4)
  let maxWorkers: number | undefined;
  if (dc.max_workers !== undefined) {
    check.count(dc.max_workers, ['max_workers']);
    maxWorkers = Number(dc.max_workers);
    if (maxWorkers < 1) check.fail(['max_workers'], `expected a whole number >= 1, got ${maxWorkers}`);
  }
  const ha = dc.ha === undefined ? nullObject<JsonValue>() : check.object(dc.ha, ['ha']);
  check.keys(ha, ['shutdown_policy'], ['ha']);
  if (ha.shutdown_policy !== undefined) check.string(ha.shutdown_policy, ['ha', 'shutdown_policy']);
  const crs = dc.crs === undefined ? nullObject<JsonValue>() : check.object(dc.crs, ['crs']);
  check.keys(crs, crsKeys(options.registry), ['crs']);
  if (crs.ha !== undefined) check.string(crs.ha, ['crs', 'ha'], false);
  for (const key of ['ha-rebalance-on-start', 'ha-auto-rebalance']) {
    if (crs[key] !== undefined) check.flag(crs[key], ['crs', key]);
  }
  // percent under pve-9.2 (0..100, as PVE 9.2's datacenter.cfg schema has them), fractions of
  // the raw imbalance under pve-5.2.0: above 100 nothing could ever balance under either
  for (const key of ['ha-auto-rebalance-threshold', 'ha-auto-rebalance-margin']) {
    if (crs[key] !== undefined)
      check.number(crs[key], ['crs', key], AUTO_REBALANCE_PERCENT_RANGE.min, AUTO_REBALANCE_PERCENT_RANGE.max);
  }
  if (crs['ha-auto-rebalance-hold-duration'] !== undefined)
    check.count(crs['ha-auto-rebalance-hold-duration'], ['crs', 'ha-auto-rebalance-hold-duration']);
  if (crs['ha-auto-rebalance-method'] !== undefined)
    check.oneOf(crs['ha-auto-rebalance-method'], BALANCER_METHODS, ['crs', 'ha-auto-rebalance-method']);
  for (const key of variantCrsKeys(options.registry)) {
    const v = crs[key];
    if (v !== undefined && typeof v !== 'number' && typeof v !== 'string' && typeof v !== 'boolean') {
      check.fail(['crs', key], `expected a number, string or flag (the HA core judges the value), got ${describe(v)}`);
    }
  }
  const out = nullObject<unknown>() as unknown as DatacenterSettings;
  out.ha = ha;
  out.crs = crs;
  if (maxWorkers !== undefined) out.max_workers = maxWorkers;
  return out;
}

/**
 * A stats file: sid → { key: number }. Structure and types are checked here (an entry that is
 * not an object, a value that is not a JSON number, an unknown key); the values themselves
 * (negative, too large for a double, missing) load as given and are reported by the HA core
 * at run time, which leaves such a service out of the usage, as the reference does. Entries of
 * services that the run never has are skipped ({@link readServiceFile}).
 */
function loadStats(
  dir: string,
  file: string,
  keys: readonly string[],
  options: LoadOptions,
  services: ReadonlySet<string>,
  warnings: string[],
): Record<string, Record<string, number>> | undefined {
  const f = readServiceFile(dir, file, options, services, warnings);
  if (!f) return undefined;
  const check: FileCheck = f.check;
  const stats = check.object(f.value, []);
  const out = nullObject<Record<string, number>>();
  for (const sid of Object.keys(stats)) {
    const entry = check.object(stats[sid], [sid]);
    check.keys(entry, keys, [sid]);
    for (const key of Object.keys(entry)) {
      if (typeof entry[key] !== 'number') check.fail([sid, key], `expected a number, got ${describe(entry[key])}`);
    }
    out[sid] = entry as Record<string, number>;
  }
  return out;
}

/**
 * Reads a JSON file keyed by service id (stats, running flags, guest configurations): every key
 * must be a service id; the entries of services the run never has (`services`) are scanned for
 * syntax only, never built, and named in one warning with their count.
 */
function readServiceFile(
  dir: string,
  file: string,
  options: LoadOptions,
  services: ReadonlySet<string>,
  warnings: string[],
): ReturnType<typeof readJson> {
  // the first few names for the message: nothing is kept per skipped entry
  const shown: string[] = [];
  let skipped = 0;
  const f = readJson(dir, file, options, (sid, check) => {
    check.sid(sid, [sid]);
    if (services.has(sid)) return true;
    if (skipped++ < NAMES_SHOWN) shown.push(sid);
    return false;
  });
  if (f && skipped > 0)
    warnings.push(
      `'${f.check.path}': ${unknownServices(shown, skipped)}; ${skipped === 1 ? 'its entry is' : 'their entries are'} ignored`,
    );
  return f;
}

function defaultStats<T extends object>(sids: string[], value: T): Record<string, T> {
  const out = nullObject<T>();
  for (const sid of sids) out[sid] = { ...value };
  return out;
}
