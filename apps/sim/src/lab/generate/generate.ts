import { existsSync, mkdirSync, readdirSync, writeFileSync } from 'node:fs';
import { basename, join } from 'node:path';
import { LabError } from '../errors';
import { Prng } from '@poise/sim';
import type { GeneratorParams } from './params';
import { TRACE_INTERVAL, TRACE_VALUES, type WorkloadTrace } from './workload-trace';
import { compareNames } from '@poise/usage';

const MiB = 1024 ** 2;

/** Command slots run at 20, 120, 220, ... s (spec §1.4: every 5th 20 s round). */
const FIRST_SLOT = 20;
const SLOT_SPACING = 100;
/** A run ends at the first slot more than 500 s after the last command (spec §1.4): last + 600. */
const END_AFTER_LAST_COMMAND = 600;

interface Node {
  name: string;
  cpu: number;
  memMiB: number;
  freeMiB: number;
}

interface Guest {
  sid: string;
  kind: 'fa' | 'cdrom' | 'ct' | 'vm';
  node: string;
  maxcpu: number;
  memMiB: number;
  cpu: number;
  useMiB: number;
  memhostMiB: number | undefined;
}

/** A generated case: file name → content, in the order written. */
export type CaseFiles = Map<string, string>;

const round2 = (x: number) => Math.round(x * 100) / 100;
const json = (v: unknown) => `${JSON.stringify(v, null, 1)}\n`;

/** The first slot time ≥ t. */
export function slotAtOrAfter(t: number): number {
  return t <= FIRST_SLOT ? FIRST_SLOT : FIRST_SLOT + Math.ceil((t - FIRST_SLOT) / SLOT_SPACING) * SLOT_SPACING;
}

/**
 * The cmdlist for commands at slot times: consecutive slots need nothing between them; a gap of
 * g > 100 s adds `delay (g − 80)` to the earlier slot (the next list then runs at its round end
 * + 80 s, spec §1.4). Times assume 20 s rounds; with longer rounds each list runs at the first
 * slot at or after its planned time.
 */
export function buildCmdlist(events: Map<number, string[]>): string[][] {
  const times = [...events.keys()].sort((a, b) => a - b);
  const lists: string[][] = [];
  for (let i = 0; i < times.length; i++) {
    const t = times[i]!;
    if ((t - FIRST_SLOT) % SLOT_SPACING !== 0 || t < FIRST_SLOT)
      throw new RangeError(`buildCmdlist: ${t} is not a slot time`);
    const list = [...events.get(t)!];
    const next = times[i + 1];
    if (i === 0 && t > FIRST_SLOT) lists.push([`delay ${t - FIRST_SLOT - 80}`]);
    if (next !== undefined && next - t > SLOT_SPACING) list.push(`delay ${next - t - 80}`);
    lists.push(list);
  }
  return lists;
}

/**
 * Generates a case directory's files from validated parameters. Pure: the same parameters (and,
 * for the `trace` shape, the same trace, read by the caller: `workloadFor`) give the same bytes
 * (every step draws from its own seeded stream). Throws {@link LabError} `bad-params` for
 * parameters that turn out impossible once the guests are drawn (they do not fit in the nodes'
 * memory).
 */
export function generateCase(p: GeneratorParams, where = 'parameters', workload?: WorkloadTrace): CaseFiles {
  const bad = (field: string, why: string) => new LabError('bad-params', `'${where}' ${field}: ${why}`);
  if (p.load.shape === 'trace' && workload === undefined)
    throw bad('load.file', "the 'trace' shape needs its trace file read (workloadFor)");
  const nodes = generateNodes(p);
  const { guests, kindOf } = generateGuests(p, nodes, bad);
  const rules = generateRules(p, nodes, guests, bad);
  // the timeline's commands, in this order within a slot: node settings, load, events
  const timeline = new Timeline(p.duration);
  scheduleNodeSettings(p, nodes, timeline);
  scheduleLoad(p, nodes, guests, timeline);
  const replay = workload === undefined ? undefined : scheduleTrace(p, nodes, guests, timeline, workload);
  scheduleEvents(p, nodes, timeline);
  timeline.close();
  return caseFiles(p, nodes, guests, kindOf, rules, timeline, replay);
}

type BadParams = (field: string, why: string) => LabError;

/** The nodes of every node group, named node1, node2, ... in order. */
function generateNodes(p: GeneratorParams): Node[] {
  const nodes: Node[] = [];
  for (const g of p.nodes) {
    for (let i = 0; i < g.count; i++) {
      const memMiB = Math.round(g.memGiB * 1024);
      nodes.push({ name: `node${nodes.length + 1}`, cpu: g.cpu, memMiB, freeMiB: memMiB });
    }
  }
  return nodes;
}

/** The guests: sizes (own stream), then kinds, then placement (`nodes`' free memory goes down). */
function generateGuests(
  p: GeneratorParams,
  nodes: Node[],
  bad: BadParams,
): { guests: Guest[]; kindOf: ('fa' | 'cdrom' | 'ct' | 'vm')[] } {
  const maxNodeCpu = Math.max(...nodes.map((n) => n.cpu));
  const sizes = Prng.forStream(p.seed, 'sizes');
  const hostRng = Prng.forStream(p.seed, 'memhost');
  const g = p.guests;
  const clamp = (x: number, lo: number, hi: number) => Math.min(hi, Math.max(lo, x));
  const drawn = Array.from({ length: g.count }, () => {
    const memMiB = Math.max(
      512,
      Math.round(clamp(sizes.logNormal(g.memGiB.median, g.memGiB.sigma), g.memGiB.min, g.memGiB.max) * 2) * 512,
    );
    const cpu = Math.max(0.01, round2(clamp(sizes.logNormal(g.cpu.median, g.cpu.sigma), g.cpu.min, g.cpu.max)));
    const use = sizes.uniform(g.memUse.min, g.memUse.max);
    const maxcpu = Math.min(maxNodeCpu, Math.max(1, 2 ** Math.ceil(Math.log2(cpu * g.headroom))));
    const useMiB = Math.max(1, Math.round(memMiB * use));
    // its own stream: asking for memhost leaves every other draw as it was
    const hostFactor = g.memhost ? hostRng.uniform(g.memhost.min, g.memhost.max) : undefined;
    const memhostMiB = hostFactor === undefined ? undefined : Math.min(memMiB, Math.round(useMiB * hostFactor));
    return { memMiB, cpu, useMiB, maxcpu, memhostMiB };
  });
  const totalNeed = drawn.reduce((a, x) => a + x.memMiB, 0);
  const totalHave = nodes.reduce((a, n) => a + n.memMiB, 0);
  if (totalNeed > totalHave) {
    throw bad(
      'guests',
      `the ${g.count} guests drawn need ${(totalNeed / 1024).toFixed(1)} GiB of memory; the nodes have ${(totalHave / 1024).toFixed(1)} GiB (fewer or smaller guests, or more nodes)`,
    );
  }
  const kinds = Prng.forStream(p.seed, 'kinds');
  const shuffled = kinds.shuffled(drawn.map((_, i) => i));
  // largest: by memory, then cpu, then draw order (a stable, total order)
  const order =
    p.failing.pick === 'largest'
      ? [...shuffled].sort((a, b) => drawn[b]!.memMiB - drawn[a]!.memMiB || drawn[b]!.cpu - drawn[a]!.cpu || a - b)
      : shuffled;
  const kindOf = new Array<'fa' | 'cdrom' | 'ct' | 'vm'>(g.count).fill('vm');
  let k = 0;
  for (let i = 0; i < p.failing.fa; i++) kindOf[order[k++]!] = 'fa';
  for (let i = 0; i < p.failing.cdrom; i++) kindOf[order[k++]!] = 'cdrom';
  for (; k < g.count; k++) if (kinds.float() < g.containers) kindOf[order[k]!] = 'ct';
  let faIndex = 0;
  const sidOf = (i: number) => {
    const kind = kindOf[i]!;
    // fa:<a><b><c><d><e><f>…: b start failures (0), c migration failures (9: every 10th try works), d stop ok (0), e exists (1), f any node (0)
    if (kind === 'fa') return `fa:109010${String(++faIndex).padStart(4, '0')}`;
    return `${kind === 'ct' ? 'ct' : 'vm'}:${100 + i}`;
  };

  const place = Prng.forStream(p.seed, 'placement');
  const guests: Guest[] = [];
  // largest first, so that a fit is found whenever the first-fit-decreasing bound allows one
  const byMem = drawn.map((_, i) => i).sort((a, b) => drawn[b]!.memMiB - drawn[a]!.memMiB || a - b);
  const assigned = new Array<string>(g.count);
  for (const i of byMem) {
    const need = drawn[i]!.memMiB;
    let node: Node | undefined;
    if (g.placement === 'packed') node = nodes.find((n) => n.freeMiB >= need);
    else if (g.placement === 'spread') {
      for (const n of nodes) if (n.freeMiB >= need && (!node || n.freeMiB > node.freeMiB)) node = n;
    } else {
      const start = place.int(nodes.length);
      for (let j = 0; j < nodes.length && !node; j++) {
        const n = nodes[(start + j) % nodes.length]!;
        if (n.freeMiB >= need) node = n;
      }
    }
    if (!node)
      throw bad(
        'guests',
        `a guest of ${(need / 1024).toFixed(1)} GiB fits on no node once the larger ones are placed (fewer or smaller guests, or more nodes)`,
      );
    node.freeMiB -= need;
    assigned[i] = node.name;
  }
  for (let i = 0; i < g.count; i++) {
    const d = drawn[i]!;
    guests.push({
      sid: sidOf(i),
      kind: kindOf[i]!,
      node: assigned[i]!,
      maxcpu: d.maxcpu,
      memMiB: d.memMiB,
      cpu: d.cpu,
      useMiB: d.useMiB,
      memhostMiB: d.memhostMiB,
    });
  }

  return { guests, kindOf };
}

/** The rules: node affinity, pairs kept together and pairs kept apart, over distinct plain guests (no fa/cdrom). */
function generateRules(p: GeneratorParams, nodes: readonly Node[], guests: readonly Guest[], bad: BadParams): string[] {
  const rulesRng = Prng.forStream(p.seed, 'rules');
  const plain = rulesRng.shuffled(guests.filter((x) => x.kind === 'vm' || x.kind === 'ct'));
  const used = new Set<string>();
  const take = (pred: (x: Guest) => boolean) => {
    const x = plain.find((y) => !used.has(y.sid) && pred(y));
    if (x) used.add(x.sid);
    return x;
  };
  const rules: string[] = [];
  for (let r = 0; r < p.rules.nodeAffinity; r++) {
    const x = take(() => true)!;
    const others = nodes.filter((n) => n.name !== x.node);
    const other = others[rulesRng.int(others.length)]!.name;
    rules.push(
      `node-affinity: generated-na${r + 1}\n\tnodes ${[x.node, other].sort(compareNames).join(',')}\n\tresources ${x.sid}\n`,
    );
  }
  for (let r = 0; r < p.rules.together; r++) {
    const a = take(() => true)!;
    const b = take((y) => y.node === a.node) ?? take(() => true);
    if (!b) throw bad('rules.together', 'not enough guests for the pairs');
    rules.push(
      `resource-affinity: generated-together${r + 1}\n\tresources ${[a.sid, b.sid].sort(compareNames).join(',')}\n\taffinity positive\n`,
    );
  }
  for (let r = 0; r < p.rules.separate; r++) {
    const a = take(() => true)!;
    const b = take((y) => y.node !== a.node) ?? take(() => true);
    if (!b) throw bad('rules.separate', 'not enough guests for the pairs');
    rules.push(
      `resource-affinity: generated-apart${r + 1}\n\tresources ${[a.sid, b.sid].sort(compareNames).join(',')}\n\taffinity negative\n`,
    );
  }

  return rules;
}

/** Commands by slot time, up to the last slot of the run. */
class Timeline {
  readonly events = new Map<number, string[]>();
  /** The last slot a command may run at (the run ends about `duration` s). */
  readonly lastSlot: number;

  constructor(duration: number) {
    this.lastSlot = slotAtOrAfter(Math.max(FIRST_SLOT, duration - END_AFTER_LAST_COMMAND));
  }

  /** Adds a command at the first slot at or after `t` (the last slot at most). */
  at(t: number, cmd: string): void {
    const s = Math.min(slotAtOrAfter(t), this.lastSlot);
    let list = this.events.get(s);
    if (!list) this.events.set(s, (list = []));
    list.push(cmd);
  }

  /** Ends the timeline: the run ends at the last slot + 600 s ≈ duration. */
  close(): void {
    if (!this.events.has(this.lastSlot)) this.at(this.lastSlot, 'delay 0');
  }
}

/** At the start: power on, then each node's base load, noise and pressure baseline. */
function scheduleNodeSettings(p: GeneratorParams, nodes: readonly Node[], timeline: Timeline): void {
  const at = (t: number, cmd: string) => timeline.at(t, cmd);
  for (const n of nodes) at(0, `power ${n.name} on`);
  if (p.baseLoad && (p.baseLoad.cpu > 0 || p.baseLoad.mem > 0)) {
    for (const n of nodes)
      at(
        0,
        `node ${n.name} set-dynamic-stats cpu ${round2(n.cpu * p.baseLoad.cpu)} mem ${Math.round(n.memMiB * p.baseLoad.mem)}`,
      );
  }
  if (p.noise && (p.noise.cpu > 0 || p.noise.memMiB > 0)) {
    for (const n of nodes) at(0, `node ${n.name} set-noise cpu ${p.noise.cpu} mem ${p.noise.memMiB}`);
  }
  // the baseline first: a hot node's or an episode's pressure in the same slot comes after it
  if (p.pressure?.baseline) {
    for (const n of nodes)
      at(
        0,
        `node ${n.name} set-dynamic-stats pressurecpusome ${p.pressure.baseline.cpu} pressurememorysome ${p.pressure.baseline.mem}`,
      );
  }
}

/**
 * The load shape: guests' cpu from the start (changed in place in `guests`) and the commands
 * that change it later.
 */
function scheduleLoad(p: GeneratorParams, nodes: readonly Node[], guests: Guest[], timeline: Timeline): void {
  const at = (t: number, cmd: string) => timeline.at(t, cmd);
  const loadRng = Prng.forStream(p.seed, 'load');
  const setCpu = (x: Guest, cpu: number) => `service ${x.sid} set-dynamic-stats cpu ${Math.max(0.01, round2(cpu))}`;
  const initialCpu = new Map(guests.map((x) => [x.sid, x.cpu]));
  const L = p.load;
  if (L.shape === 'idle') {
    // idle: 5 % of the drawn cpu, from the start (in dynamic_service_stats)
    for (const x of guests) x.cpu = Math.max(0.01, round2(x.cpu * 0.05));
  } else if (L.shape === 'diurnal') {
    const followers = loadRng.shuffled(guests).slice(0, Math.round(guests.length * L.share));
    followers.sort((a, b) => compareNames(a.sid, b.sid));
    // the day starts at midnight: factor 1 − a·cos(2πt/1 d), lowest at 0 h, highest at 12 h
    const factor = (t: number) => 1 - L.amplitude * Math.cos((2 * Math.PI * t) / 86400);
    for (const x of followers) x.cpu = Math.max(0.01, round2(initialCpu.get(x.sid)! * factor(0)));
    for (let t = L.step; t < p.duration - END_AFTER_LAST_COMMAND; t += L.step) {
      for (const x of followers) at(t, setCpu(x, initialCpu.get(x.sid)! * factor(t)));
    }
  } else if (L.shape === 'bursty') {
    const n = guests.length === 0 ? 0 : Math.round((L.burstsPerHour * (p.duration - END_AFTER_LAST_COMMAND)) / 3600);
    const bursts = Array.from({ length: n }, () => {
      const x = guests[loadRng.int(guests.length)]!;
      const start = Math.round(loadRng.uniform(0, Math.max(1, p.duration - END_AFTER_LAST_COMMAND - L.burst)));
      return { x, start };
    }).sort((a, b) => a.start - b.start || compareNames(a.x.sid, b.x.sid));
    for (const { x, start } of bursts) {
      at(start, setCpu(x, Math.min(x.maxcpu, initialCpu.get(x.sid)! * L.factor)));
      at(start + L.burst, setCpu(x, initialCpu.get(x.sid)!));
    }
  } else if (L.shape === 'hot-node') {
    const hot = L.hotNode ?? nodes[0]!.name;
    for (const x of guests.filter((y) => y.node === hot)) {
      if (L.at === 0) x.cpu = Math.min(x.maxcpu, round2(x.cpu * L.factor));
      else at(L.at, setCpu(x, Math.min(x.maxcpu, x.cpu * L.factor)));
    }
    if (L.hotPressure !== undefined) {
      const mem = p.pressure?.baseline?.mem ?? 0;
      at(L.at, `node ${hot} set-dynamic-stats pressurecpusome ${L.hotPressure} pressurememorysome ${mem}`);
    }
  } else if (L.shape === 'overcommit') {
    const capacity = nodes.reduce((a, n) => a + n.cpu, 0);
    const factor = overcommitFactor(guests, L.level * capacity);
    for (const x of guests) {
      const cpu = Math.min(x.maxcpu, x.cpu * factor);
      if (L.at === 0) x.cpu = Math.max(0.01, round2(cpu));
      else at(L.at, setCpu(x, cpu));
    }
  } else if (L.shape === 'noisy-neighbour') {
    const end = p.duration - END_AFTER_LAST_COMMAND;
    if (L.neighbour === 'host') {
      const hot = nodes.find((n) => n.name === (L.hotNode ?? nodes[0]!.name))!;
      const base = p.baseLoad ? round2(hot.cpu * p.baseLoad.cpu) : 0;
      const burst = round2(base + (L.neighbourCores ?? hot.cpu / 2));
      for (let t = L.at; t + L.burst <= end; t += L.period) {
        at(t, `node ${hot.name} set-dynamic-stats cpu ${burst}`);
        at(t + L.burst, `node ${hot.name} set-dynamic-stats cpu ${base}`);
      }
    } else if (guests.length > 0) {
      // the guest with the most cores (then the most cpu, then sid order) runs at all of them
      const x = [...guests].sort((a, b) => b.maxcpu - a.maxcpu || b.cpu - a.cpu || compareNames(a.sid, b.sid))[0]!;
      for (let t = L.at; t + L.burst <= end; t += L.period) {
        at(t, setCpu(x, x.maxcpu));
        at(t + L.burst, setCpu(x, initialCpu.get(x.sid)!));
      }
    }
  }
}

/** What the trace replay did, for the case's README. */
interface TraceReplay {
  readonly workload: WorkloadTrace;
  /** The trace row each guest replays, in guest order. */
  readonly rows: readonly number[];
  /** Mean cpu use over the run as fractions of the cores: the guests', and the nodes' base load. */
  readonly use: { readonly guests: number; readonly base: number };
}

/**
 * The `trace` shape: each guest replays one row of the trace, a seeded draw without replacement
 * while rows last, then with replacement; cpu in use = value % × scale × its cores (at most its
 * cores), every {@link TRACE_INTERVAL} s from `load.offset` into the day on.
 */
function scheduleTrace(
  p: GeneratorParams,
  nodes: readonly Node[],
  guests: Guest[],
  timeline: Timeline,
  t: WorkloadTrace,
): TraceReplay | undefined {
  const L = p.load;
  if (L.shape !== 'trace') return undefined;
  const at = (time: number, cmd: string) => timeline.at(time, cmd);
  const lastSlot = timeline.lastSlot;
  const rows = t.values.length;
  const traceRng = Prng.forStream(p.seed, 'trace');
  const order = traceRng.shuffled(Array.from({ length: rows }, (_, r) => r));
  const traceRows = guests.map((_, i) => (i < rows ? order[i]! : traceRng.int(rows)));
  const first = (L.offset ?? 0) / TRACE_INTERVAL;
  const scale = L.scale ?? 1;
  const cpuAt = (x: Guest, row: Float64Array, k: number) =>
    Math.max(0.01, round2(Math.min(x.maxcpu, (row[(first + k) % TRACE_VALUES]! / 100) * scale * x.maxcpu)));
  const last = guests.map((x, i) => (x.cpu = cpuAt(x, t.values[traceRows[i]!]!, 0)));
  // the guests' cpu over the run, time-weighted (each step's values hold from its slot on)
  let inUse = last.reduce((a, c) => a + c, 0);
  let since = 0;
  let area = 0;
  for (let k = 1; k * TRACE_INTERVAL < p.duration - END_AFTER_LAST_COMMAND; k++) {
    for (let i = 0; i < guests.length; i++) {
      const x = guests[i]!;
      const cpu = cpuAt(x, t.values[traceRows[i]!]!, k);
      // an unchanged value needs no command
      if (cpu !== last[i]) at(k * TRACE_INTERVAL, `service ${x.sid} set-dynamic-stats cpu ${cpu}`);
      last[i] = cpu;
    }
    const slot = Math.min(slotAtOrAfter(k * TRACE_INTERVAL), lastSlot);
    area += inUse * (slot - since);
    since = slot;
    inUse = last.reduce((a, c) => a + c, 0);
  }
  const end = lastSlot + END_AFTER_LAST_COMMAND;
  area += inUse * (end - since);
  const cores = nodes.reduce((a, n) => a + n.cpu, 0);
  const base = p.baseLoad ? nodes.reduce((a, n) => a + round2(n.cpu * p.baseLoad!.cpu), 0) : 0;
  return { workload: t, rows: traceRows, use: { guests: area / end / cores, base: base / cores } };
}

/** The events: pressure episodes, maintenance windows and node failures, each in a random window. */
function scheduleEvents(p: GeneratorParams, nodes: readonly Node[], timeline: Timeline): void {
  const at = (t: number, cmd: string) => timeline.at(t, cmd);
  const evRng = Prng.forStream(p.seed, 'events');
  const window = (d: number) => {
    // start in [5 % of the run, end − 20 min − d]
    const lo = Math.round(p.duration * 0.05);
    const hi = Math.max(lo, p.duration - 1200 - d);
    return Math.round(evRng.uniform(lo, hi));
  };
  if (p.pressure) {
    const base = p.pressure.baseline ?? { cpu: 0, mem: 0 };
    const set = (n: string, cpu: number, mem: number) =>
      `node ${n} set-dynamic-stats pressurecpusome ${cpu} pressurememorysome ${mem}`;
    // episodes on one node that overlap merge into one (an earlier end must not cut a later one short)
    const byNode = new Map<string, [number, number][]>();
    for (let e = 0; e < p.pressure.episodes; e++) {
      const n = nodes[evRng.int(nodes.length)]!.name;
      const t = window(p.pressure.duration);
      let list = byNode.get(n);
      if (!list) byNode.set(n, (list = []));
      list.push([slotAtOrAfter(t), slotAtOrAfter(t + p.pressure.duration)]);
    }
    for (const n of nodes) {
      const merged: [number, number][] = [];
      for (const [a, b] of (byNode.get(n.name) ?? []).sort((x, y) => x[0] - y[0])) {
        const last = merged[merged.length - 1];
        if (last && a <= last[1]) last[1] = Math.max(last[1], b);
        else merged.push([a, b]);
      }
      for (const [a, b] of merged) {
        at(a, set(n.name, p.pressure.cpu, p.pressure.mem));
        at(b, set(n.name, base.cpu, base.mem));
      }
    }
  }
  const pickNodes = (count: number) => evRng.shuffled(nodes.map((n) => n.name)).slice(0, count);
  if (p.maintenance) {
    for (const n of pickNodes(p.maintenance.count)) {
      const t = window(p.maintenance.duration);
      at(t, `crm ${n} enable-node-maintenance`);
      at(t + p.maintenance.duration, `crm ${n} disable-node-maintenance`);
    }
  }
  if (p.failures) {
    for (const n of pickNodes(p.failures.count)) {
      const t = window(p.failures.duration);
      at(t, `${p.failures.kind} ${n} off`);
      at(t + p.failures.duration, `${p.failures.kind} ${n} on`);
    }
  }
}

/** The case directory's files, in the order written. */
function caseFiles(
  p: GeneratorParams,
  nodes: readonly Node[],
  guests: readonly Guest[],
  kindOf: readonly string[],
  rules: readonly string[],
  timeline: Timeline,
  replay: TraceReplay | undefined,
): CaseFiles {
  const files: CaseFiles = new Map();
  const hw: Record<string, unknown> = {};
  for (const n of nodes) hw[n.name] = { power: 'off', network: 'off', maxcpu: n.cpu, maxmem: n.memMiB * MiB };
  const sc: Record<string, unknown> = {};
  const st: Record<string, unknown> = {};
  const dy: Record<string, unknown> = {};
  const running = new Map<string, Record<string, number>>(nodes.map((n) => [n.name, {}]));
  const sorted = [...guests].sort((a, b) => compareNames(a.sid, b.sid));
  for (const x of sorted) {
    sc[x.sid] = { node: x.node, state: 'started' };
    st[x.sid] = { maxcpu: x.maxcpu, maxmem: x.memMiB * MiB };
    dy[x.sid] =
      x.memhostMiB === undefined
        ? { cpu: x.cpu, mem: x.useMiB * MiB }
        : { cpu: x.cpu, mem: x.useMiB * MiB, memhost: x.memhostMiB * MiB };
    running.get(x.node)![x.sid] = 1;
  }
  const guestConfig: Record<string, unknown> = {};
  for (const x of sorted) {
    if (x.kind === 'cdrom') guestConfig[x.sid] = { ide2: 'local:iso/install.iso,media=cdrom' };
  }
  const endTime = timeline.lastSlot + END_AFTER_LAST_COMMAND;
  files.set('README', readme(p, nodes.length, guests.length, endTime, kindOf, replay));
  files.set('hardware_status', json(hw));
  files.set('service_config', json(sc));
  files.set('static_service_stats', json(st));
  files.set('dynamic_service_stats', json(dy));
  for (const n of nodes) files.set(`service_status_${n.name}`, json(running.get(n.name)));
  files.set('datacenter.cfg', json({ crs: p.crs }));
  if (rules.length > 0) files.set('rules_config', rules.join('\n'));
  if (Object.keys(guestConfig).length > 0) files.set('guest_config', json(guestConfig));
  const loadModel = p.loadPressure === undefined ? {} : { 'pressure-model': 'load', 'load-pressure': p.loadPressure };
  files.set('sim_options', json({ seed: p.seed, 'max-time': endTime + 1200, ...loadModel }));
  files.set(
    'cmdlist',
    `[\n${buildCmdlist(timeline.events)
      .map((l) => ` ${JSON.stringify(l)}`)
      .join(',\n')}\n]\n`,
  );
  files.set('generator.json', json(p));
  return files;
}

/**
 * The factor f that makes the guests demand `target` cores together, each at most its own cores:
 * Σ min(maxcpu, f · cpu) = target (found by bisection: the sum grows with f). When even every
 * guest at its cores falls short, every guest runs at its cores (f = ∞).
 */
export function overcommitFactor(guests: readonly { cpu: number; maxcpu: number }[], target: number): number {
  const demand = (f: number) => guests.reduce((a, x) => a + Math.min(x.maxcpu, x.cpu * f), 0);
  if (guests.reduce((a, x) => a + x.maxcpu, 0) <= target) return Infinity;
  let lo = 0;
  let hi = 1;
  while (demand(hi) < target) hi *= 2;
  for (let i = 0; i < 60; i++) {
    const mid = (lo + hi) / 2;
    if (demand(mid) < target) lo = mid;
    else hi = mid;
  }
  return hi;
}

function readme(
  p: GeneratorParams,
  nodes: number,
  guests: number,
  end: number,
  kinds: readonly string[],
  replay: TraceReplay | undefined,
): string {
  const count = (k: string) => kinds.filter((x) => x === k).length;
  const lines = [
    `${p.name} — generated by poise-sim generate (seed ${p.seed}); generator.json holds the parameters.`,
    '',
    `${nodes} nodes, ${guests} guests (${count('vm') + count('cdrom')} vm, ${count('ct')} ct, ${count('fa')} fa), load shape '${p.load.shape}', ` +
      `about ${(end / 3600).toFixed(1)} h simulated (last command at ${end - END_AFTER_LAST_COMMAND} s).`,
    `Guest memory: log-normal (median ${p.guests.memGiB.median} GiB, sigma ${p.guests.memGiB.sigma}, ${p.guests.memGiB.min}..${p.guests.memGiB.max} GiB);`,
    p.load.shape === 'trace'
      ? `cores: the power of two at or above a log-normal draw (median ${p.guests.cpu.median}, sigma ${p.guests.cpu.sigma}) × ${p.guests.headroom}; placement '${p.guests.placement}'.`
      : `cpu in use: log-normal (median ${p.guests.cpu.median} cores, sigma ${p.guests.cpu.sigma}); placement '${p.guests.placement}'.`,
  ];
  if (p.failing.cdrom)
    lines.push(`${p.failing.cdrom} VMs have a local CD-ROM (guest_config): their live migration fails.`);
  if (p.failing.fa) lines.push(`${p.failing.fa} fa: guests fail 9 of every 10 migration attempts.`);
  if (p.pressure?.episodes)
    lines.push(
      `${p.pressure.episodes} pressure episodes (cpu ${p.pressure.cpu} %, memory ${p.pressure.mem} %, ${p.pressure.duration} s).`,
    );
  if (p.load.shape === 'overcommit')
    lines.push(
      `From ${p.load.at} s on the guests demand ${Math.round(p.load.level * 100)} % of all cores together (each at most its own cores).`,
    );
  if (p.load.shape === 'noisy-neighbour') {
    lines.push(
      `A noisy neighbour (${p.load.neighbour === 'host' ? `a host process on ${p.load.hotNode ?? 'node1'}` : 'the guest with the most cores'}) bursts for ${p.load.burst} s every ${p.load.period} s from ${p.load.at} s on.`,
    );
  }
  if (replay) {
    const { workload, rows, use } = replay;
    const distinct = new Set(rows).size;
    lines.push(
      `The guests replay rows of the trace file '${basename(workload.file)}' (sha256 ${workload.sha256 || 'unknown'}, ${workload.values.length} rows): ` +
        `${distinct} distinct rows${distinct < guests ? ' (more guests than rows: the rest drawn again)' : ''}, from ${(p.load.offset ?? 0) / 3600} h into the day, ` +
        `cpu in use = value % × ${p.load.scale ?? 1} × the guest's cores (at most its cores), every ${TRACE_INTERVAL} s.`,
    );
    const pc = (x: number) => (x * 100).toFixed(1);
    lines.push(
      `Mean cpu use over the run: ${pc(use.guests + use.base)} % of the cores (guests ${pc(use.guests)} %, base load ${pc(use.base)} %; noise aside).`,
    );
  }
  if (p.loadPressure !== undefined)
    lines.push(
      "Node pressure comes from the load: sim_options 'pressure-model' 'load' (the simulator's load pressure model).",
    );
  if (p.maintenance?.count)
    lines.push(`${p.maintenance.count} node maintenance windows of ${p.maintenance.duration} s.`);
  if (p.failures?.count)
    lines.push(`${p.failures.count} node failures (${p.failures.kind}) of ${p.failures.duration} s.`);
  if (p.baseLoad || p.noise || p.pressure?.episodes || p.failing.cdrom) {
    lines.push(
      'Uses the simulator extensions of issue 8 (node set-dynamic-stats / set-noise, guest_config, sim_options).',
    );
  }
  return `${lines.join('\n')}\n`;
}

/** Writes the files into `dir`, which must not exist or be empty. Nothing is written on error. */
export function writeCase(dir: string, files: CaseFiles): void {
  if (existsSync(dir) && readdirSync(dir).length > 0)
    throw new LabError('bad-argument', `'${dir}' exists and is not empty`);
  mkdirSync(dir, { recursive: true });
  for (const [name, text] of files) writeFileSync(join(dir, name), text);
}
