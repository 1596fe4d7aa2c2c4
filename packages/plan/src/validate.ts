import { PlanError } from './errors';
// eslint-disable-next-line @typescript-eslint/no-unused-vars -- PlanInput is named by {@link} in a doc comment: typedoc resolves it through this import
import type { PlanInput, PlanWeights } from './types';
import { compareNames } from '@poise/usage';

/**
 * Default objective weights: both resources count alike; a migration costs 0.001 (a move must
 * lower the weighted highest utilisation by 0.1 percentage point to pay for itself) and each
 * GiB it copies 0.0001 (a 16 GiB guest costs as much again as the move).
 */
export const DEFAULT_WEIGHTS: Required<{ [K in keyof PlanWeights]: number }> = {
  cpu: 1,
  mem: 1,
  move: 0.001,
  gib: 0.0001,
};

/** Largest accepted size (cores, bytes): keeps every sum exact enough and finite. */
export const MAX_SIZE = 2 ** 60;

/** A node with every default applied. */
export interface CheckedNode {
  readonly name: string;
  readonly cpuCores: number;
  readonly memBytes: number;
  readonly online: boolean;
  readonly maintenance: boolean;
  readonly baseCpu: number;
  readonly baseMem: number;
}

/** A guest with every default applied; `mem` is the memory the planner counts (memhost when known). */
export interface CheckedGuest {
  readonly id: string;
  readonly kind: 'vm' | 'ct';
  readonly node: string;
  readonly ha: boolean;
  readonly cpu: number;
  readonly cores: number;
  readonly mem: number;
  readonly migratable: boolean;
  readonly reason: string | undefined;
  readonly ignored: boolean;
}

/** A rule with defaults applied (priorities 0, strict false). */
export type CheckedRule =
  | {
      readonly id: string;
      readonly type: 'node-affinity';
      readonly resources: readonly string[];
      readonly nodes: ReadonlyMap<string, number>;
      readonly strict: boolean;
    }
  | {
      readonly id: string;
      readonly type: 'resource-affinity';
      readonly affinity: 'positive' | 'negative';
      readonly resources: readonly string[];
    };

/** A validated input: nodes and guests in byte order of name and id, every default applied. */
export interface CheckedInput {
  readonly nodes: readonly CheckedNode[];
  readonly guests: readonly CheckedGuest[];
  readonly rules: readonly CheckedRule[];
  readonly cpuOvercommitRatio: number | undefined;
  readonly memoryHeadroomPercent: number;
  readonly weights: Required<{ [K in keyof PlanWeights]: number }>;
}

/** A value for a message: strings quoted, everything else as JSON would show it. */
export function show(value: unknown): string {
  if (typeof value === 'string') return `'${value}'`;
  if (typeof value === 'number' || typeof value === 'boolean' || value === null) return String(value);
  if (value === undefined) return 'nothing';
  if (Array.isArray(value)) return 'an array';
  return typeof value;
}

const fail = (message: string): never => {
  throw new PlanError('invalid-input', message);
};

function record(value: unknown, path: string): Record<string, unknown> {
  if (typeof value !== 'object' || value === null || Array.isArray(value))
    fail(`${path} must be an object, got ${show(value)}`);
  return value as Record<string, unknown>;
}

function list(value: unknown, path: string): readonly unknown[] {
  if (!Array.isArray(value)) fail(`${path} must be an array, got ${show(value)}`);
  return value as unknown[];
}

function name(value: unknown, path: string): string {
  if (typeof value !== 'string' || value === '') fail(`${path} must be a non-empty string, got ${show(value)}`);
  return value as string;
}

/** Checks a size (cores, bytes): finite, ≥ 0 (> 0 when `positive`), at most 2^60; throws `invalid-input` naming `path`. */
export function checkSize(value: unknown, path: string, positive: boolean): number {
  if (
    typeof value !== 'number' ||
    !Number.isFinite(value) ||
    value < 0 ||
    (positive && value === 0) ||
    value > MAX_SIZE
  ) {
    fail(`${path} must be a finite number ${positive ? '> 0' : '>= 0'} (at most 2^60), got ${show(value)}`);
  }
  return value as number;
}

function optionalSize(value: unknown, path: string, fallback: number): number {
  return value === undefined ? fallback : checkSize(value, path, false);
}

function flag(value: unknown, path: string, fallback: boolean): boolean {
  if (value === undefined) return fallback;
  if (typeof value !== 'boolean') fail(`${path} must be a boolean, got ${show(value)}`);
  return value as boolean;
}

/** Keys an object of the input may have; anything else is a typo worth an error. */
function onlyKeys(value: Record<string, unknown>, keys: readonly string[], path: string): void {
  for (const key of Object.keys(value)) {
    if (!keys.includes(key)) fail(`${path} has an unknown field '${key}' (known: ${keys.join(', ')})`);
  }
}

const NODE_KEYS = ['name', 'cpuCores', 'memBytes', 'online', 'maintenance', 'baseCpu', 'baseMem'];
const GUEST_KEYS = ['id', 'kind', 'node', 'ha', 'cpu', 'cores', 'mem', 'memhost', 'migratable', 'reason', 'ignored'];
const INPUT_KEYS = ['nodes', 'guests', 'rules', 'capacity', 'weights'];

function checkNode(value: unknown, path: string): CheckedNode {
  const n = record(value, path);
  onlyKeys(n, NODE_KEYS, path);
  const nodeName = name(n.name, `${path}.name`);
  const at = `node '${nodeName}' (${path})`;
  const online = flag(n.online, `${at}: online`, true);
  // an offline node takes nothing: PVE reports 0 cores and memory for a node it cannot reach
  const cpuCores = checkSize(n.cpuCores, `${at}: cpuCores`, online);
  const memBytes = checkSize(n.memBytes, `${at}: memBytes`, online);
  const baseCpu = optionalSize(n.baseCpu, `${at}: baseCpu`, 0);
  const baseMem = optionalSize(n.baseMem, `${at}: baseMem`, 0);
  // the base is measured use of the node itself: it cannot exceed what the node has
  if (baseCpu > cpuCores) fail(`${at}: baseCpu ${baseCpu} is more than the node's ${cpuCores} cores`);
  if (baseMem > memBytes) fail(`${at}: baseMem ${baseMem} is more than the node's ${memBytes} bytes of memory`);
  return {
    name: nodeName,
    cpuCores,
    memBytes,
    online,
    maintenance: flag(n.maintenance, `${at}: maintenance`, false),
    baseCpu,
    baseMem,
  };
}

function checkGuest(value: unknown, path: string, nodes: ReadonlySet<string>): CheckedGuest {
  const g = record(value, path);
  onlyKeys(g, GUEST_KEYS, path);
  const id = name(g.id, `${path}.id`);
  const at = `guest '${id}' (${path})`;
  if (g.kind !== 'vm' && g.kind !== 'ct') fail(`${at}: kind must be 'vm' or 'ct', got ${show(g.kind)}`);
  const node = name(g.node, `${at}: node`);
  if (!nodes.has(node)) fail(`${at}: node '${node}' is not one of the nodes`);
  const cpu = checkSize(g.cpu, `${at}: cpu`, false);
  const mem = checkSize(g.mem, `${at}: mem`, false);
  const memhost = g.memhost === undefined ? undefined : checkSize(g.memhost, `${at}: memhost`, false);
  const migratable = flag(g.migratable, `${at}: migratable`, true);
  if (g.reason !== undefined && typeof g.reason !== 'string')
    fail(`${at}: reason must be a string, got ${show(g.reason)}`);
  const cores = optionalSize(g.cores, `${at}: cores`, cpu);
  // a guest's cpu use is a share of its assigned cores (PVE: a fraction of maxcpu)
  if (cpu > cores) fail(`${at}: cpu ${cpu} (cores in use) is more than its ${cores} assigned cores`);
  return {
    id,
    kind: g.kind as 'vm' | 'ct',
    node,
    ha: flag(g.ha, `${at}: ha`, false),
    cpu,
    cores,
    mem: memhost ?? mem,
    migratable,
    reason: migratable ? undefined : ((g.reason as string | undefined) ?? 'cannot be migrated'),
    ignored: flag(g.ignored, `${at}: ignored`, false),
  };
}

function checkRule(value: unknown, path: string, nodes: ReadonlySet<string>, guests: ReadonlySet<string>): CheckedRule {
  const r = record(value, path);
  const id = name(r.id, `${path}.id`);
  const at = `rule '${id}' (${path})`;
  const resources = list(r.resources, `${at}: resources`).map((sid, i) => {
    const s = name(sid, `${at}: resources[${i}]`);
    if (!guests.has(s)) fail(`${at}: resources[${i}] '${s}' is not one of the guests`);
    return s;
  });
  if (resources.length === 0) fail(`${at}: resources must not be empty`);
  const seen = new Set<string>();
  for (const sid of resources) {
    if (seen.has(sid)) fail(`${at}: resources lists '${sid}' twice`);
    seen.add(sid);
  }
  if (r.type === 'node-affinity') {
    onlyKeys(r, ['id', 'type', 'resources', 'nodes', 'strict'], path);
    const priorities = new Map<string, number>();
    list(r.nodes, `${at}: nodes`).forEach((entry, i) => {
      const e = record(entry, `${at}: nodes[${i}]`);
      onlyKeys(e, ['node', 'priority'], `${at}: nodes[${i}]`);
      const node = name(e.node, `${at}: nodes[${i}].node`);
      if (!nodes.has(node)) fail(`${at}: nodes[${i}] '${node}' is not one of the nodes`);
      if (priorities.has(node)) fail(`${at}: nodes lists '${node}' twice`);
      const priority = e.priority === undefined ? 0 : e.priority;
      // HA rules take `node[:priority]` with a priority ≥ 0 (higher first)
      if (typeof priority !== 'number' || !Number.isFinite(priority) || priority < 0)
        fail(`${at}: nodes[${i}].priority must be a finite number >= 0, got ${show(priority)}`);
      priorities.set(node, priority as number);
    });
    if (priorities.size === 0) fail(`${at}: nodes must not be empty`);
    return { id, type: 'node-affinity', resources, nodes: priorities, strict: flag(r.strict, `${at}: strict`, false) };
  }
  if (r.type === 'resource-affinity') {
    onlyKeys(r, ['id', 'type', 'resources', 'affinity'], path);
    if (r.affinity !== 'positive' && r.affinity !== 'negative')
      fail(`${at}: affinity must be 'positive' or 'negative', got ${show(r.affinity)}`);
    return { id, type: 'resource-affinity', affinity: r.affinity as 'positive' | 'negative', resources };
  }
  return fail(`${at}: type must be 'node-affinity' or 'resource-affinity', got ${show(r.type)}`);
}

/**
 * Checks a {@link PlanInput} (any value, e.g. parsed JSON) and applies the defaults. Throws
 * `PlanError` `invalid-input` naming the field and value: a missing or empty `nodes` list (an
 * empty cluster), duplicate node names, guest ids or rule ids, sizes that are negative, not
 * finite or above 2^60 (cores and memory of an online node must be > 0; an offline node's may
 * be 0, as PVE reports a node it cannot reach), a guest on a node that is not
 * listed, a rule naming an unknown guest or node, unknown fields (typos), a capacity or
 * weight out of range. Nothing is planned from an input that fails.
 */
export function validatePlanInput(input: unknown): CheckedInput {
  const root = record(input, 'input');
  onlyKeys(root, INPUT_KEYS, 'input');
  const rawNodes = list(root.nodes, 'nodes');
  if (rawNodes.length === 0) fail('nodes must not be empty: a plan needs a cluster with at least one node');
  const nodes = rawNodes.map((n, i) => checkNode(n, `nodes[${i}]`));
  const nodeNames = new Set<string>();
  nodes.forEach((n, i) => {
    if (nodeNames.has(n.name)) fail(`nodes[${i}].name '${n.name}' is listed twice`);
    nodeNames.add(n.name);
  });
  const guests = list(root.guests, 'guests').map((g, i) => checkGuest(g, `guests[${i}]`, nodeNames));
  const guestIds = new Set<string>();
  guests.forEach((g, i) => {
    if (guestIds.has(g.id)) fail(`guests[${i}].id '${g.id}' is listed twice`);
    guestIds.add(g.id);
  });
  const rules =
    root.rules === undefined
      ? []
      : list(root.rules, 'rules').map((r, i) => checkRule(r, `rules[${i}]`, nodeNames, guestIds));
  const ruleIds = new Set<string>();
  rules.forEach((r, i) => {
    if (ruleIds.has(r.id)) fail(`rules[${i}].id '${r.id}' is listed twice`);
    ruleIds.add(r.id);
  });
  let ratio: number | undefined;
  let headroom = 0;
  if (root.capacity !== undefined) {
    const c = record(root.capacity, 'capacity');
    onlyKeys(c, ['cpuOvercommitRatio', 'memoryHeadroomPercent'], 'capacity');
    if (c.cpuOvercommitRatio !== undefined)
      ratio = checkSize(c.cpuOvercommitRatio, 'capacity.cpuOvercommitRatio', true);
    if (c.memoryHeadroomPercent !== undefined) {
      const h = c.memoryHeadroomPercent;
      if (typeof h !== 'number' || !Number.isFinite(h) || h < 0 || h >= 100)
        fail(`capacity.memoryHeadroomPercent must be a number in 0 <= x < 100, got ${show(h)}`);
      headroom = h as number;
    }
  }
  const weights = { ...DEFAULT_WEIGHTS };
  if (root.weights !== undefined) {
    const w = record(root.weights, 'weights');
    onlyKeys(w, Object.keys(DEFAULT_WEIGHTS), 'weights');
    for (const key of Object.keys(DEFAULT_WEIGHTS) as (keyof typeof DEFAULT_WEIGHTS)[]) {
      if (w[key] === undefined) continue;
      const v = w[key];
      if (typeof v !== 'number' || !Number.isFinite(v) || v < 0 || v > 1e6)
        fail(`weights.${key} must be a finite number in 0..1e6, got ${show(v)}`);
      weights[key] = v as number;
    }
  }
  return {
    nodes: [...nodes].sort((a, b) => compareNames(a.name, b.name)),
    guests: [...guests].sort((a, b) => compareNames(a.id, b.id)),
    rules,
    cpuOvercommitRatio: ratio,
    memoryHeadroomPercent: headroom,
    weights,
  };
}
