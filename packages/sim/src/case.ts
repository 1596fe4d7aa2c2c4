import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { DatacenterSettings, ManagerStatus } from '@poise/env';
import { SimError } from './errors';
import { validateCommand } from './commands';

/** One node of `hardware_status`. */
export interface HardwareNode {
  power: string;
  network: string;
  maxcpu?: number;
  maxmem?: number;
  'pve-manager-version'?: string;
  cfs?: { rw?: boolean; update?: boolean };
  shutdown?: string | null;
  [key: string]: unknown;
}

/** A test case: the inputs of one simulation, with the reference's defaults applied. */
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
  dynamicServiceStats: Record<string, { cpu: number; mem: number }>;
  /** Per node, sid → running flag (`service_status_<node>`). */
  serviceStatus: Record<string, Record<string, number>>;
}

const GiB = 1024 ** 3;
const MiB = 1024 ** 2;

/** Default node capacity when `hardware_status` is absent. */
export const DEFAULT_NODE_MAXCPU = 24;
export const DEFAULT_NODE_MAXMEM = 131072 * MiB;
/** Default static stats of a service without `static_service_stats`. */
export const DEFAULT_SERVICE_MAXCPU = 4.0;
export const DEFAULT_SERVICE_MAXMEM = 4 * GiB;
/** Default measured usage of a service without `dynamic_service_stats`. */
export const DEFAULT_SERVICE_CPU = 2.0;
export const DEFAULT_SERVICE_MEM = 2 * GiB;

function readJson(dir: string, file: string): unknown {
  const path = join(dir, file);
  const text = readFileSync(path, 'utf8');
  try {
    return JSON.parse(text);
  } catch (err) {
    const msg = (err as Error).message;
    const pos = /position (\d+)/.exec(msg);
    let where = '';
    if (pos) {
      const before = text.slice(0, Number(pos[1]));
      const line = before.split('\n').length;
      const column = Number(pos[1]) - before.lastIndexOf('\n');
      where = ` (line ${line}, column ${column})`;
    }
    throw new SimError('bad-case', `invalid JSON in '${path}'${where}: ${msg}`, { cause: err });
  }
}

function readOptionalJson(dir: string, file: string): unknown {
  return existsSync(join(dir, file)) ? readJson(dir, file) : undefined;
}

function readOptionalText(dir: string, file: string): string {
  const path = join(dir, file);
  return existsSync(path) ? readFileSync(path, 'utf8') : '';
}

function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

function expectObject(v: unknown, where: string): Record<string, unknown> {
  if (!isObject(v)) throw new SimError('bad-case', `${where}: expected a JSON object`);
  return v;
}

/**
 * Loads a test-case directory (the reference tester's format, spec §1.2). Throws a
 * {@link SimError} naming the file and field for anything malformed; never writes.
 */
export function loadCase(dir: string, name = dir): CaseInput {
  if (!existsSync(join(dir, 'cmdlist'))) {
    throw new SimError('bad-case', `missing '${join(dir, 'cmdlist')}'`);
  }
  const rawCmdlist = readJson(dir, 'cmdlist');
  if (!Array.isArray(rawCmdlist)) throw new SimError('bad-case', `'${join(dir, 'cmdlist')}': expected an array of command lists`);
  const cmdlist = rawCmdlist.map((list, i) => {
    if (!Array.isArray(list)) throw new SimError('bad-case', `'${join(dir, 'cmdlist')}' [${i}]: expected an array of commands`);
    return list.map((cmd, j) => {
      if (typeof cmd !== 'string') throw new SimError('bad-case', `'${join(dir, 'cmdlist')}' [${i}][${j}]: expected a command string`);
      return cmd;
    });
  });

  let hardwareStatus: Record<string, HardwareNode>;
  const rawHw = readOptionalJson(dir, 'hardware_status');
  if (rawHw === undefined) {
    hardwareStatus = {};
    for (const n of ['node1', 'node2', 'node3']) {
      hardwareStatus[n] = { power: 'off', network: 'off', maxcpu: DEFAULT_NODE_MAXCPU, maxmem: DEFAULT_NODE_MAXMEM };
    }
  } else {
    const hw = expectObject(rawHw, `'${join(dir, 'hardware_status')}'`);
    hardwareStatus = {};
    for (const [node, d] of Object.entries(hw)) {
      const nd = expectObject(d, `'${join(dir, 'hardware_status')}' node '${node}'`);
      for (const key of ['power', 'network']) {
        if (nd[key] !== 'on' && nd[key] !== 'off') {
          throw new SimError('bad-case', `'${join(dir, 'hardware_status')}' ${node}.${key}: expected "on" or "off"`);
        }
      }
      hardwareStatus[node] = nd as HardwareNode;
    }
  }
  const nodes = Object.keys(hardwareStatus);
  if (nodes.length === 0) throw new SimError('bad-case', `'${join(dir, 'hardware_status')}': no nodes`);

  let serviceConfig: Record<string, Record<string, unknown>>;
  const rawSc = readOptionalJson(dir, 'service_config');
  if (rawSc === undefined) {
    serviceConfig = {};
    for (let i = 0; i < 6; i++) serviceConfig[`vm:${101 + i}`] = { node: `node${(i % 3) + 1}` };
  } else {
    serviceConfig = {};
    for (const [sid, d] of Object.entries(expectObject(rawSc, `'${join(dir, 'service_config')}'`))) {
      const cd = expectObject(d, `'${join(dir, 'service_config')}' '${sid}'`);
      if (!/^(vm|ct|fa):\d+$/.test(sid)) throw new SimError('bad-case', `'${join(dir, 'service_config')}': invalid service id '${sid}'`);
      if (!cd.node) throw new SimError('bad-case', `'${join(dir, 'service_config')}' ${sid}.node: service without assigned node`);
      serviceConfig[sid] = cd;
    }
  }

  const managerStatus = (readOptionalJson(dir, 'manager_status') ?? {}) as ManagerStatus;
  expectObject(managerStatus, `'${join(dir, 'manager_status')}'`);

  const rawDc = readOptionalJson(dir, 'datacenter.cfg');
  const dc = rawDc === undefined ? {} : expectObject(rawDc, `'${join(dir, 'datacenter.cfg')}'`);
  const datacenterCfg: DatacenterSettings = {
    ...dc,
    ha: isObject(dc.ha) ? (dc.ha as DatacenterSettings['ha']) : {},
    crs: isObject(dc.crs) ? (dc.crs as DatacenterSettings['crs']) : {},
  };

  let staticServiceStats = readOptionalJson(dir, 'static_service_stats') as CaseInput['staticServiceStats'] | undefined;
  if (staticServiceStats === undefined) {
    staticServiceStats = {};
    for (const sid of Object.keys(serviceConfig)) {
      staticServiceStats[sid] = { maxcpu: DEFAULT_SERVICE_MAXCPU, maxmem: DEFAULT_SERVICE_MAXMEM };
    }
  } else {
    expectObject(staticServiceStats, `'${join(dir, 'static_service_stats')}'`);
  }
  let dynamicServiceStats = readOptionalJson(dir, 'dynamic_service_stats') as CaseInput['dynamicServiceStats'] | undefined;
  if (dynamicServiceStats === undefined) {
    dynamicServiceStats = {};
    for (const sid of Object.keys(staticServiceStats)) {
      dynamicServiceStats[sid] = { cpu: DEFAULT_SERVICE_CPU, mem: DEFAULT_SERVICE_MEM };
    }
  } else {
    expectObject(dynamicServiceStats, `'${join(dir, 'dynamic_service_stats')}'`);
  }

  const serviceStatus: Record<string, Record<string, number>> = {};
  for (const node of nodes) {
    const raw = readOptionalJson(dir, `service_status_${node}`);
    serviceStatus[node] = raw === undefined ? {} : (expectObject(raw, `'${join(dir, `service_status_${node}`)}'`) as Record<string, number>);
  }

  // validate every command up front, so a typo fails with its position instead of midway
  cmdlist.forEach((list, i) =>
    list.forEach((cmd, j) => {
      const problem = validateCommand(cmd, nodes);
      if (problem) throw new SimError('bad-case', `'${join(dir, 'cmdlist')}' [${i}][${j}] '${cmd}': ${problem}`);
    }),
  );

  return {
    name,
    cmdlist,
    hardwareStatus,
    serviceConfig,
    managerStatus,
    rulesConfig: readOptionalText(dir, 'rules_config'),
    groups: readOptionalText(dir, 'groups'),
    datacenterCfg,
    staticServiceStats,
    dynamicServiceStats,
    serviceStatus,
  };
}
