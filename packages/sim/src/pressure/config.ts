/**
 * The load pressure model's settings: `sim_options` `"pressure-model": "load"` and the
 * `"load-pressure"` object beside it (README, *Load pressure model*). Parse → normalise with
 * defaults → cross-field rules; every problem is a `SimError` `bad-case` naming the file and
 * the field's dot path.
 */
import { FileCheck, describe } from '../check';
import type { JsonObject, JsonValue } from '../json';
import { CURVE_FAMILIES, type CurveFamily, type PressureCurve } from './curves';
import { MIGRATION_DEFAULTS, type MigrationSettings, migrationSettings } from '@poise/contention';

/** Where a node's pressure comes from: the case's commands (`scripted`, the default) or its load. */
export type PressureModelKind = 'scripted' | 'load';
export const PRESSURE_MODEL_KINDS: readonly PressureModelKind[] = ['scripted', 'load'];

/** One resource (cpu or memory) of the model. */
export interface ResourcePressureOptions {
  /** The family and its parameters: load ratio → PSI some share. */
  readonly curve: PressureCurve;
  /**
   * Time constant of the reported average, seconds: the kernel's avg10 is an exponentially
   * decaying average with a 10 s window (`avg ← p + (avg − p)·e^(−Δ/τ)`); 0 reports the
   * instantaneous share.
   */
  readonly delaySeconds: number;
  /** Reported values get uniform noise in ±this many percentage points (0: none). */
  readonly noisePercent: number;
  /** Probability per node and round that the reported value is an outlier (a spike). */
  readonly outlierProbability: number;
  /** An outlier adds this many percentage points. */
  readonly outlierPercent: number;
}

/** A node's own settings (`load-pressure.nodes.<node>`). */
export interface NodePressureOptions {
  /** Multiplies the node's cores for the cpu curve (an older or SMT-heavy node: < 1); replaces the drawn heterogeneity. */
  readonly capacityFactor?: number;
  /** false: the node reports no PSI (an older kernel or PVE 8); its guests' ground truth still counts. */
  readonly psi: boolean;
  /** The node's own cpu / memory resource settings (in place of the cluster's). */
  readonly cpu?: ResourcePressureOptions;
  readonly memory?: ResourcePressureOptions;
}

/**
 * What a migration costs (ground truth only: nobody reports it): the settings of
 * `@poise/contention`'s migration model (`estimateMigration`), with the simulator's own
 * relocation time. Keys and sources: the package README, *Load pressure model*.
 */
export interface MigrationCostOptions {
  /** The model's settings, checked (`migrationSettings`). */
  readonly model: MigrationSettings;
  /** A relocation (a running container, or `relocate`): the guest is down this long, seconds. */
  readonly relocateSeconds: number;
}

/** The whole model, normalised (every default filled in). */
export interface LoadPressureOptions {
  readonly cpu: ResourcePressureOptions;
  readonly memory: ResourcePressureOptions;
  /** Each node's cpu capacity factor is drawn uniformly from [1 − h, 1 + h] (seeded), 0..0.9. */
  readonly heterogeneity: number;
  /** Per node settings, by node name (a null-prototype record). */
  readonly nodes: Readonly<Record<string, NodePressureOptions>>;
  readonly migration: MigrationCostOptions;
}

/** Default parameters of each family for cpu: a knee at about 60–70 % of a 32-core node for `queue`, at 85 % for `logistic`. */
export const CPU_FAMILY_DEFAULTS = {
  queue: { family: 'queue', burstiness: 4, maxPercent: 100 },
  logistic: { family: 'logistic', knee: 0.85, width: 0.05, maxPercent: 100 },
} as const;
/**
 * Default parameters of each family for memory: late and steep (reclaim begins when the page
 * cache is exhausted, then stalls grow fast), and never the whole time (80 %).
 */
export const MEMORY_FAMILY_DEFAULTS = {
  queue: { family: 'queue', burstiness: 1, maxPercent: 80 },
  logistic: { family: 'logistic', knee: 0.95, width: 0.015, maxPercent: 80 },
} as const;
/** The families used when `load-pressure` names none. */
const DEFAULT_CPU_FAMILY: CurveFamily = 'queue';
const DEFAULT_MEMORY_FAMILY: CurveFamily = 'logistic';
/** avg10's window, seconds. */
export const DEFAULT_DELAY_SECONDS = 10;
/** A relocated guest is down while it stops and starts again, seconds. */
const DEFAULT_RELOCATE_SECONDS = 10;

/** Ranges (inclusive unless said). */
const LIMITS = {
  burstiness: [1, 1024],
  maxPercent: [0, 100], // > 0
  knee: [0, 4], // > 0
  width: [0.001, 2],
  ratio: [0, 100],
  points: [2, 64],
  delaySeconds: [0, 3600],
  noisePercent: [0, 50],
  outlierProbability: [0, 1],
  outlierPercent: [0, 100],
  heterogeneity: [0, 0.9],
  capacityFactor: [0.05, 10],
  bandwidth: [1, 1_000_000],
  bandwidth0: [0, 1_000_000],
  bwlimit: [1, 1_000_000_000],
  downtime: [0, 3600], // > 0
  transferCores: [0, 64],
  timeout: [0, 86_400], // > 0
  seconds: [0, 3600],
} as const;

const RESOURCE_KEYS = [
  'family',
  'burstiness',
  'knee',
  'width',
  'max-percent',
  'points',
  'delay-seconds',
  'noise-percent',
  'outlier-probability',
  'outlier-percent',
];
const FAMILY_KEYS: Record<CurveFamily, readonly string[]> = {
  queue: ['burstiness', 'max-percent'],
  logistic: ['knee', 'width', 'max-percent'],
  piecewise: ['points'],
};
const MODEL_KEYS = ['cpu', 'memory', 'heterogeneity', 'nodes', 'migration'];
const NODE_KEYS = ['capacity-factor', 'psi', 'cpu', 'memory'];
const MIGRATION_KEYS = [
  'bandwidth-mib-per-second',
  'bwlimit-kib-per-second',
  'max-downtime-seconds',
  'dirty-mib-per-core-second',
  'transfer-cores',
  'auto-converge',
  'timeout-seconds',
  'degradation-share',
  'setup-seconds',
  'relocate-seconds',
];
/** Keys of the former near-free cost, refused with what replaced them. */
const REPLACED_MIGRATION_KEYS: Readonly<Record<string, string>> = {
  'stall-share': "replaced by the migration model: 'degradation-share' (the guest's loss while it migrates)",
  'downtime-seconds': "replaced by the migration model: 'max-downtime-seconds' (the longest pause allowed)",
};

/** A flag already checked by `FileCheck.flag`: on or off. */
const isOn = (v: JsonValue | undefined): boolean => v === true || v === 1 || v === '1';

/** A JSON number in [lo, hi] (`loOpen`: > lo). */
function num(
  check: FileCheck,
  v: JsonValue | undefined,
  field: readonly string[],
  [lo, hi]: readonly [number, number],
  loOpen = false,
): number {
  if (typeof v !== 'number' || !Number.isFinite(v) || (loOpen ? !(v > lo) : !(v >= lo)) || !(v <= hi)) {
    check.fail(
      field,
      `expected a number ${loOpen ? '>' : 'from'} ${lo}${loOpen ? ' and ≤' : ' to'} ${hi}, got ${describe(v)}`,
    );
  }
  return v;
}

function optNum(
  check: FileCheck,
  o: JsonObject,
  key: string,
  field: readonly string[],
  range: readonly [number, number],
  fallback: number,
  loOpen = false,
): number {
  return o[key] === undefined ? fallback : num(check, o[key], [...field, key], range, loOpen);
}

function parseCurve(
  check: FileCheck,
  o: JsonObject,
  field: readonly string[],
  resource: 'cpu' | 'memory',
): PressureCurve {
  const family = (
    o.family === undefined
      ? resource === 'cpu'
        ? DEFAULT_CPU_FAMILY
        : DEFAULT_MEMORY_FAMILY
      : check.oneOf(o.family, CURVE_FAMILIES, [...field, 'family'])
  ) as CurveFamily;
  for (const other of CURVE_FAMILIES) {
    if (other === family) continue;
    for (const key of FAMILY_KEYS[other]) {
      if (o[key] !== undefined && !FAMILY_KEYS[family].includes(key))
        check.fail(
          [...field, key],
          `not a parameter of the '${family}' family (it takes ${FAMILY_KEYS[family].join(', ')})`,
        );
    }
  }
  const defaults = resource === 'cpu' ? CPU_FAMILY_DEFAULTS : MEMORY_FAMILY_DEFAULTS;
  switch (family) {
    case 'queue':
      return {
        family,
        burstiness: optNum(check, o, 'burstiness', field, LIMITS.burstiness, defaults.queue.burstiness),
        maxPercent: optNum(check, o, 'max-percent', field, LIMITS.maxPercent, defaults.queue.maxPercent, true),
      };
    case 'logistic':
      return {
        family,
        knee: optNum(check, o, 'knee', field, LIMITS.knee, defaults.logistic.knee, true),
        width: optNum(check, o, 'width', field, LIMITS.width, defaults.logistic.width),
        maxPercent: optNum(check, o, 'max-percent', field, LIMITS.maxPercent, defaults.logistic.maxPercent, true),
      };
    case 'piecewise':
      return { family, points: parsePoints(check, o.points, [...field, 'points']) };
  }
}

function parsePoints(check: FileCheck, v: JsonValue | undefined, field: readonly string[]): [number, number][] {
  if (v === undefined) check.fail(field, "the 'piecewise' family needs its points: [[0, 0], [ratio, percent], …]");
  if (!Array.isArray(v) || v.length < LIMITS.points[0] || v.length > LIMITS.points[1]) {
    check.fail(
      field,
      `expected an array of ${LIMITS.points[0]} to ${LIMITS.points[1]} [load ratio, percent] pairs, got ${describe(v)}`,
    );
  }
  const out: [number, number][] = [];
  v.forEach((p, i) => {
    const f = [...field, String(i)];
    if (!Array.isArray(p) || p.length !== 2) check.fail(f, `expected a [load ratio, percent] pair, got ${describe(p)}`);
    const x = num(check, p[0], [...f, '0'], LIMITS.ratio);
    const y = num(check, p[1], [...f, '1'], LIMITS.maxPercent);
    if (i === 0 && x !== 0) check.fail([...f, '0'], `the first point must be at load ratio 0, got ${x}`);
    const prev = out[i - 1];
    if (prev && !(x > prev[0])) check.fail([...f, '0'], `load ratios must increase strictly (${x} after ${prev[0]})`);
    if (prev && y < prev[1])
      check.fail([...f, '1'], `pressure must not fall as load grows (${y} % after ${prev[1]} %)`);
    out.push([x, y]);
  });
  return out;
}

function parseResource(
  check: FileCheck,
  v: JsonValue | undefined,
  field: readonly string[],
  resource: 'cpu' | 'memory',
): ResourcePressureOptions {
  const o = v === undefined ? (Object.create(null) as JsonObject) : check.object(v, field);
  check.keys(o, RESOURCE_KEYS, field);
  return {
    curve: parseCurve(check, o, field, resource),
    delaySeconds: optNum(check, o, 'delay-seconds', field, LIMITS.delaySeconds, DEFAULT_DELAY_SECONDS),
    noisePercent: optNum(check, o, 'noise-percent', field, LIMITS.noisePercent, 0),
    outlierProbability: optNum(check, o, 'outlier-probability', field, LIMITS.outlierProbability, 0),
    outlierPercent: optNum(check, o, 'outlier-percent', field, LIMITS.outlierPercent, 0),
  };
}

/**
 * Parses the `load-pressure` object (`value`, at `field` of the file `check` names; absent: every
 * default). `nodes`: the case's node names (a per-node entry must name one of them). Throws
 * `SimError` `bad-case` naming the file and field.
 */
export function parseLoadPressureObject(
  check: FileCheck,
  value: JsonValue | undefined,
  field: readonly string[],
  nodes: ReadonlySet<string>,
): LoadPressureOptions {
  const o = value === undefined ? (Object.create(null) as JsonObject) : check.object(value, field);
  check.keys(o, MODEL_KEYS, field);
  const nodeOptions = Object.create(null) as Record<string, NodePressureOptions>;
  if (o.nodes !== undefined) {
    const all = check.object(o.nodes, [...field, 'nodes']);
    for (const name of Object.keys(all)) {
      const f = [...field, 'nodes', name];
      if (!nodes.has(name)) check.fail(f, `node '${name}' does not exist in hardware_status`);
      const n = check.object(all[name], f);
      check.keys(n, NODE_KEYS, f);
      if (n.psi !== undefined) check.flag(n.psi, [...f, 'psi']);
      const psi = n.psi === undefined ? true : n.psi === true || n.psi === 1 || n.psi === '1';
      nodeOptions[name] = {
        psi,
        ...(n['capacity-factor'] === undefined
          ? {}
          : { capacityFactor: num(check, n['capacity-factor'], [...f, 'capacity-factor'], LIMITS.capacityFactor) }),
        ...(n.cpu === undefined ? {} : { cpu: parseResource(check, n.cpu, [...f, 'cpu'], 'cpu') }),
        ...(n.memory === undefined ? {} : { memory: parseResource(check, n.memory, [...f, 'memory'], 'memory') }),
      };
    }
  }
  const m =
    o.migration === undefined
      ? (Object.create(null) as JsonObject)
      : check.object(o.migration, [...field, 'migration']);
  const mf = [...field, 'migration'];
  for (const key of Object.keys(REPLACED_MIGRATION_KEYS))
    if (m[key] !== undefined) check.fail([...mf, key], REPLACED_MIGRATION_KEYS[key]!);
  check.keys(m, MIGRATION_KEYS, mf);
  if (m['auto-converge'] !== undefined) check.flag(m['auto-converge'], [...mf, 'auto-converge']);
  const autoConverge = m['auto-converge'] === undefined ? MIGRATION_DEFAULTS.autoConverge : isOn(m['auto-converge']);
  const d = MIGRATION_DEFAULTS;
  const MIB = 1024 ** 2;
  const model = migrationSettings({
    linkBytesPerSecond:
      optNum(check, m, 'bandwidth-mib-per-second', mf, LIMITS.bandwidth, d.linkBytesPerSecond / MIB) * MIB,
    bwlimitBytesPerSecond:
      m['bwlimit-kib-per-second'] === undefined
        ? null
        : num(check, m['bwlimit-kib-per-second'], [...mf, 'bwlimit-kib-per-second'], LIMITS.bwlimit) * 1024,
    maxDowntimeSeconds: optNum(check, m, 'max-downtime-seconds', mf, LIMITS.downtime, d.maxDowntimeSeconds, true),
    dirtyBytesPerCoreSecond:
      optNum(check, m, 'dirty-mib-per-core-second', mf, LIMITS.bandwidth0, d.dirtyBytesPerCoreSecond / MIB) * MIB,
    transferCpuCores: optNum(check, m, 'transfer-cores', mf, LIMITS.transferCores, d.transferCpuCores),
    autoConverge,
    timeoutSeconds: optNum(check, m, 'timeout-seconds', mf, LIMITS.timeout, d.timeoutSeconds, true),
    degradationShare: optNum(check, m, 'degradation-share', mf, [0, 1], d.degradationShare),
    setupSeconds: optNum(check, m, 'setup-seconds', mf, LIMITS.seconds, d.setupSeconds),
  });
  return {
    cpu: parseResource(check, o.cpu, [...field, 'cpu'], 'cpu'),
    memory: parseResource(check, o.memory, [...field, 'memory'], 'memory'),
    heterogeneity: optNum(check, o, 'heterogeneity', field, LIMITS.heterogeneity, 0),
    nodes: nodeOptions,
    migration: {
      model,
      relocateSeconds: optNum(check, m, 'relocate-seconds', mf, LIMITS.seconds, DEFAULT_RELOCATE_SECONDS),
    },
  };
}

/**
 * Checks and normalises a `load-pressure` object given anywhere else than a case's `sim_options`
 * (the lab generator's parameters): `where` names the file, `field` the path to the object in
 * it. Throws `SimError` `bad-case` (`'<where>' <field>.<key>: <problem>`).
 */
export function parseLoadPressure(
  value: unknown,
  where: string,
  field: readonly string[],
  nodes: Iterable<string>,
): LoadPressureOptions {
  return parseLoadPressureObject(new FileCheck(where), value as JsonValue | undefined, field, new Set(nodes));
}
