import { readFileSync } from 'node:fs';
import { parse as parseYaml } from 'yaml';
import { z } from 'zod';
import { LabError } from '../errors';
import { dotPath } from '../trace';
import { crsProblem } from '../variants';
import { SimError, parseLoadPressure } from '@poise/sim';
import { TRACE_INTERVAL } from './workload-trace';

/** Load shapes of `load.shape`. */
const LOAD_SHAPES = ['idle', 'diurnal', 'bursty', 'hot-node', 'overcommit', 'noisy-neighbour', 'trace'] as const;

/** Longest scenario the generator writes (30 days). */
const MAX_DURATION = 30 * 86400;
/** Size limits (far above 64 nodes × 5,000 guests; they keep a typo from filling the disk). */
const MAX_NODES = 1000;
const MAX_GUESTS = 200_000;

/** `90`, `90s`, `30m`, `24h`, `2d` → seconds (an integer). */
export function parseDuration(v: unknown): number | undefined {
  if (typeof v === 'number') return Number.isInteger(v) ? v : undefined;
  if (typeof v !== 'string') return undefined;
  const m = /^\s*(\d+(?:\.\d+)?)\s*(s|m|h|d)?\s*$/.exec(v);
  if (!m) return undefined;
  const f = { s: 1, m: 60, h: 3600, d: 86400 }[(m[2] ?? 's') as 's' | 'm' | 'h' | 'd'];
  const secs = Number(m[1]) * f;
  return Number.isInteger(secs) ? secs : undefined;
}

const duration = (min: number) =>
  z.union([z.number(), z.string()]).transform((v, ctx) => {
    const s = parseDuration(v);
    if (s === undefined) {
      ctx.addIssue({
        code: 'custom',
        message: `expected a duration in whole seconds such as 90, '30m', '24h' or '2d', got ${JSON.stringify(v)}`,
      });
      return z.NEVER;
    }
    if (s < min || s > MAX_DURATION) {
      ctx.addIssue({
        code: 'custom',
        message: `expected a duration between ${min} s and ${MAX_DURATION} s (30 days), got ${s} s`,
      });
      return z.NEVER;
    }
    return s;
  });

const count = (max = Number.MAX_SAFE_INTEGER) =>
  z.number().int({ message: 'expected a whole number' }).min(0, { message: 'expected a count ≥ 0' }).max(max);
const positive = z.number().refine((v) => Number.isFinite(v) && v > 0, { message: 'expected a number > 0' });
const fraction = z
  .number()
  .min(0, { message: 'expected a fraction in 0..1' })
  .max(1, { message: 'expected a fraction in 0..1' });
const pct = z
  .number()
  .min(0, { message: 'expected a percentage in 0..100' })
  .max(100, { message: 'expected a percentage in 0..100' });

const sizeDist = (d: { median: number; sigma: number; min: number; max: number }) =>
  z
    .strictObject({
      median: positive.default(d.median),
      sigma: z.number().min(0).max(3).default(d.sigma),
      min: positive.default(d.min),
      max: positive.default(d.max),
    })
    .default(d)
    .refine((x) => x.min <= x.median && x.median <= x.max, { message: "expected 'min' ≤ 'median' ≤ 'max'" });

const crsValue = z.union([z.string(), z.number().refine(Number.isFinite), z.boolean()]);

/** The generator's parameters (a YAML or JSON file, and/or flags). Every field has a default. */
const paramsSchema = z.strictObject({
  /** Shown in the case's README. */
  name: z.string().default('generated scenario'),
  seed: count().default(1),
  /** Simulated time: the run ends at about this time (commands are placed before it). */
  duration: duration(1200).default(7200),
  /** Node groups; names node1..nodeN in this order. */
  nodes: z
    .array(
      z.strictObject({
        count: count(MAX_NODES).refine((c) => c >= 1, { message: 'expected at least 1 node' }),
        cpu: z.number().int().min(1),
        memGiB: positive,
      }),
    )
    .min(1, { message: 'expected at least one node group' })
    .default([{ count: 3, cpu: 16, memGiB: 64 }]),
  guests: z
    .strictObject({
      count: count(MAX_GUESTS).default(12),
      /** Share of guests that are containers (`ct:`). */
      containers: fraction.default(0),
      /** Configured memory, GiB: log-normal, truncated to [min, max], rounded to 0.5 GiB. */
      memGiB: sizeDist({ median: 4, sigma: 0.8, min: 0.5, max: 64 }),
      /** Cores in use at the start: log-normal, truncated to [min, max], rounded to 0.01. */
      cpu: sizeDist({ median: 0.5, sigma: 1, min: 0.02, max: 8 }),
      /** Share of the configured memory in use, uniform in [min, max]. */
      memUse: z
        .strictObject({ min: fraction.default(0.3), max: fraction.default(0.9) })
        .default({ min: 0.3, max: 0.9 })
        .refine((x) => x.min <= x.max, { message: "expected 'min' ≤ 'max'" }),
      /**
       * A guest's cores (`maxcpu`): the power of two at or above its cpu in use × this (at least
       * 1, at most the largest node's). 2: guests use up to half their cores; more leaves room
       * for load shapes that multiply the cpu (a guest never uses more than its cores).
       */
      headroom: z
        .number()
        .min(1, { message: 'expected a factor from 1 to 64' })
        .max(64, { message: 'expected a factor from 1 to 64' })
        .default(2),
      /** random: a random node with room; spread: the node with the most free memory; packed: first fit in node order. */
      placement: z.enum(['random', 'spread', 'packed']).default('random'),
      /**
       * The host-side footprint (`memhost`) as a multiple of the memory in use, uniform in
       * [min, max] (at most the configured memory); absent: no `memhost`.
       */
      memhost: z
        .strictObject({
          min: z.number().min(1, { message: 'expected a factor ≥ 1' }).max(4),
          max: z.number().min(1, { message: 'expected a factor ≥ 1' }).max(4),
        })
        .refine((x) => x.min <= x.max, { message: "expected 'min' ≤ 'max'" })
        .optional(),
    })
    .default({
      count: 12,
      containers: 0,
      memGiB: { median: 4, sigma: 0.8, min: 0.5, max: 64 },
      cpu: { median: 0.5, sigma: 1, min: 0.02, max: 8 },
      memUse: { min: 0.3, max: 0.9 },
      headroom: 2,
      placement: 'random',
    }),
  rules: z
    .strictObject({
      /** Non-strict node-affinity rules, each for one guest and two nodes (its own and another). */
      nodeAffinity: count().default(0),
      /** Positive resource-affinity pairs (guests placed together). */
      together: count().default(0),
      /** Negative resource-affinity pairs (guests placed apart). */
      separate: count().default(0),
    })
    .default({ nodeAffinity: 0, together: 0, separate: 0 }),
  load: z
    .strictObject({
      shape: z.enum(LOAD_SHAPES, { message: `expected one of ${LOAD_SHAPES.join(', ')}` }).default('idle'),
      /** diurnal: seconds between load updates. */
      step: duration(100).default(3600),
      /** diurnal: share of guests that follow the day's curve. */
      share: fraction.default(0.2),
      /** diurnal: the curve's swing around the guest's base cpu (0.6 → 0.4× at night, 1.6× at noon). */
      amplitude: fraction.default(0.6),
      /** bursty: bursts per hour over the cluster, each multiplying one guest's cpu by `factor` (at most its cores, `maxcpu`) for `burst`. */
      burstsPerHour: z.number().min(0).max(3600).default(4),
      factor: z.number().min(1).max(100).default(4),
      burst: duration(100).default(1200),
      /** hot-node: the node whose guests get `factor` × cpu from `at` on (default: the first node). */
      hotNode: z.string().optional(),
      at: duration(0).default(0),
      /** hot-node: PSI cpu some (%) the hot node reports from `at` on (absent: unchanged). */
      hotPressure: pct.optional(),
      /**
       * overcommit: from `at` on, every guest's cpu is scaled by one factor so that the guests
       * together demand this share of all cores (each at most its own cores, `maxcpu`): 0.8
       * fits when balanced, above 1 saturates every node.
       */
      level: z
        .number()
        .min(0.01, { message: 'expected a share of the cores from 0.01 to 4' })
        .max(4, { message: 'expected a share of the cores from 0.01 to 4' })
        .default(0.8),
      /**
       * noisy-neighbour: `host` (a process outside HA on `hotNode`, which no balancer can move)
       * or `guest` (the guest with the most cores, which runs at all of them) bursts for `burst`
       * every `period`, the first at `at`.
       */
      neighbour: z.enum(['host', 'guest']).default('host'),
      /** noisy-neighbour `host`: the cores it takes during a burst (default: half of the node's). */
      neighbourCores: positive.optional(),
      period: duration(200).default(7200),
      /**
       * trace: the trace file whose rows the guests replay (absolute, or relative to the
       * parameter file; `workload-trace.ts`). Optional fields without a default, so that the
       * `generator.json` of the other shapes stays as it was.
       */
      file: z.string().min(1, { message: 'expected a file name' }).optional(),
      /** trace: where in the day the replay starts (a multiple of 300 s below 24 h; default 0). */
      offset: duration(0).optional(),
      /** trace: a factor on every value (default 1); a guest never uses more than its cores. */
      scale: z
        .number()
        .refine((v) => Number.isFinite(v) && v > 0 && v <= 100, { message: 'expected a factor > 0 and ≤ 100' })
        .optional(),
    })
    .default({
      shape: 'idle',
      step: 3600,
      share: 0.2,
      amplitude: 0.6,
      burstsPerHour: 4,
      factor: 4,
      burst: 1200,
      at: 0,
      level: 0.8,
      neighbour: 'host',
      period: 7200,
    }),
  /** Load outside the HA services, fraction of each node's capacity (`node <n> set-dynamic-stats`, issue 8). */
  baseLoad: z.strictObject({ cpu: fraction.default(0), mem: fraction.default(0) }).optional(),
  /** Seeded random-walk noise on the base load (`node <n> set-noise`, issue 8): cores and MiB. */
  noise: z.strictObject({ cpu: z.number().min(0).default(0), memMiB: z.number().min(0).default(0) }).optional(),
  /**
   * Node pressure (`node <n> set-dynamic-stats pressurecpusome|pressurememorysome`): `baseline`
   * PSI every node reports from the start (absent: nodes report none until an episode), and
   * `episodes` on random nodes at `cpu` / `mem` % for `duration`, back to the baseline after.
   */
  pressure: z
    .strictObject({
      baseline: z.strictObject({ cpu: pct.default(0), mem: pct.default(0) }).optional(),
      episodes: count(10_000).default(0),
      duration: duration(100).default(1800),
      cpu: pct.default(25),
      mem: pct.default(0),
    })
    .optional(),
  /**
   * Guests whose migration fails: `cdrom` VMs with a local CD-ROM (guest_config), `fa` guests
   * failing 9 of 10 migrations; `pick`: random guests, or the largest (the balancer's likely
   * candidates: with `packed` placement they sit on the fullest node).
   */
  failing: z
    .strictObject({
      cdrom: count().default(0),
      fa: count().default(0),
      pick: z.enum(['random', 'largest']).default('random'),
    })
    .default({ cdrom: 0, fa: 0, pick: 'random' }),
  /** Nodes put into maintenance for `duration` at random times. */
  maintenance: z.strictObject({ count: count(), duration: duration(100).default(3600) }).optional(),
  /** Node failures (`power` off/on, or `network` off/on) for `duration` at random times. */
  failures: z
    .strictObject({
      count: count(),
      duration: duration(100).default(1800),
      kind: z.enum(['power', 'network']).default('power'),
    })
    .optional(),
  /**
   * The simulator's load pressure model: `sim_options` `"pressure-model": "load"` and this
   * object as its `"load-pressure"` (the case format's keys: `cpu`, `memory`, `heterogeneity`,
   * `nodes`, `migration`; `{}` for every default). Absent: pressure is scripted (`pressure`,
   * `load.hotPressure`), which it excludes.
   */
  loadPressure: z.record(z.string(), z.unknown()).optional(),
  /** datacenter.cfg `crs` section (variants override it). */
  crs: z.record(z.string(), crsValue).default({ ha: 'dynamic', 'ha-auto-rebalance': 1 }),
});

export type GeneratorParams = z.output<typeof paramsSchema>;

/**
 * Validates generator parameters; throws {@link LabError} `bad-params` naming `where` and the
 * field. Only checks that need no drawing happen here; {@link generateCase} checks the rest
 * (e.g. whether the drawn guests fit) before writing anything.
 */
export function validateParams(value: unknown, where: string): GeneratorParams {
  const res = paramsSchema.safeParse(value ?? {});
  if (!res.success) {
    const i = res.error.issues[0]!;
    throw new LabError(
      'bad-params',
      `'${where}' ${dotPath(i.path)}: ${i.message.charAt(0).toLowerCase()}${i.message.slice(1)}`,
    );
  }
  const p = res.data;
  const bad = (field: string, why: string) => new LabError('bad-params', `'${where}' ${field}: ${why}`);
  for (const [k, v] of Object.entries(p.crs)) {
    const problem = crsProblem(k, v);
    if (problem !== undefined) throw bad(problem.startsWith('unknown') ? 'crs' : `crs.${k}`, problem);
  }
  const nodeCount = p.nodes.reduce((a, g) => a + g.count, 0);
  if (nodeCount > MAX_NODES) throw bad('nodes', `${nodeCount} nodes, at most ${MAX_NODES}`);
  const g = p.guests;
  const totalMemGiB = p.nodes.reduce((a, n) => a + n.count * n.memGiB, 0);
  const largestNode = Math.max(...p.nodes.map((n) => n.memGiB));
  if (g.count * g.memGiB.min > totalMemGiB) {
    throw bad(
      'guests.count',
      `${g.count} guests of at least ${g.memGiB.min} GiB need ${g.count * g.memGiB.min} GiB; the nodes have ${totalMemGiB} GiB`,
    );
  }
  if (g.memGiB.min > largestNode)
    throw bad('guests.memGiB.min', `${g.memGiB.min} GiB fits on no node (the largest has ${largestNode} GiB)`);
  const special = p.failing.cdrom + p.failing.fa;
  if (special > g.count) throw bad('failing', `${special} failing guests, but only ${g.count} guests`);
  const ruled = p.rules.nodeAffinity + 2 * p.rules.together + 2 * p.rules.separate;
  if (ruled > g.count - special) {
    throw bad(
      'rules',
      `the rules need ${ruled} distinct guests (node-affinity 1, pairs 2 each) besides the ${special} failing ones; there are ${g.count - special}`,
    );
  }
  if (p.rules.nodeAffinity > 0 && nodeCount < 2)
    throw bad('rules.nodeAffinity', 'node-affinity rules need at least 2 nodes');
  if (p.rules.separate > 0 && nodeCount < 2) throw bad('rules.separate', 'negative affinity needs at least 2 nodes');
  if ((p.load.shape === 'hot-node' || p.load.shape === 'noisy-neighbour') && p.load.hotNode !== undefined) {
    const m = /^node(\d+)$/.exec(p.load.hotNode);
    if (!m || Number(m[1]) < 1 || Number(m[1]) > nodeCount)
      throw bad('load.hotNode', `unknown node '${p.load.hotNode}' (node1..node${nodeCount})`);
  }
  if (p.load.at >= p.duration) throw bad('load.at', `${p.load.at} s is not before the end (${p.duration} s)`);
  if (p.load.shape === 'trace') {
    if (p.load.file === undefined) throw bad('load.file', "the 'trace' shape needs a trace file");
    const offset = p.load.offset ?? 0;
    if (offset % TRACE_INTERVAL !== 0 || offset >= 86400)
      throw bad('load.offset', `expected a multiple of ${TRACE_INTERVAL} s below 24 h (86400 s), got ${offset} s`);
  } else {
    for (const key of ['file', 'offset', 'scale'] as const)
      if (p.load[key] !== undefined)
        throw bad(`load.${key}`, `only the 'trace' shape reads it (shape '${p.load.shape}')`);
  }
  if (p.load.shape === 'noisy-neighbour' && p.load.burst >= p.load.period)
    throw bad('load.burst', `a burst of ${p.load.burst} s does not fit in a period of ${p.load.period} s`);
  if (p.loadPressure !== undefined) {
    if (p.pressure)
      throw bad(
        'pressure',
        "scripted pressure, but loadPressure computes every node's pressure from its load (leave one out)",
      );
    if (p.load.hotPressure !== undefined)
      throw bad(
        'load.hotPressure',
        "scripted pressure, but loadPressure computes the hot node's pressure from its load (leave one out)",
      );
    try {
      parseLoadPressure(
        p.loadPressure,
        where,
        ['loadPressure'],
        Array.from({ length: nodeCount }, (_, i) => `node${i + 1}`),
      );
    } catch (err) {
      if (err instanceof SimError) throw new LabError('bad-params', err.message, { cause: err });
      throw err;
    }
  }
  for (const [key, ev] of [
    ['maintenance', p.maintenance],
    ['failures', p.failures],
  ] as const) {
    if (!ev || ev.count === 0) continue;
    if (ev.count > nodeCount - 1)
      throw bad(`${key}.count`, `${ev.count} of ${nodeCount} nodes: at least one node must stay up`);
    if (ev.duration > p.duration - 1200)
      throw bad(
        `${key}.duration`,
        `${ev.duration} s does not fit in a ${p.duration} s scenario (it must end 20 min before the end)`,
      );
  }
  if (p.pressure && p.pressure.episodes > 0 && p.pressure.duration > p.duration - 1200) {
    throw bad(
      'pressure.duration',
      `${p.pressure.duration} s does not fit in a ${p.duration} s scenario (it must end 20 min before the end)`,
    );
  }
  return p;
}

/** Reads a parameter file (YAML or JSON); errors name the file and field. */
export function readParams(file: string): unknown {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (err) {
    throw new LabError('bad-params', `cannot read '${file}': ${(err as Error).message}`, { cause: err });
  }
  try {
    return parseYaml(text) ?? {};
  } catch (err) {
    throw new LabError('bad-params', `'${file}': invalid YAML: ${(err as Error).message.split('\n')[0]}`, {
      cause: err,
    });
  }
}
