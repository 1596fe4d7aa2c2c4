import type {
  NodeFailureReport,
  NodeUse,
  PlacementPlan,
  PlacementResult,
  PlannedMove,
  PlanObjective,
  PlanInput,
} from '@poise/plan';

// How `plan`, `place` and `plan --what-if` print their answers: text for people, one JSON
// document for tools. Pure functions of the answer.

const GIB = 1024 ** 3;
/** Constraints the current placement breaks that the text lists (a drain breaks one per guest on the node); `--json` has them all. */
export const MAX_VIOLATIONS_SHOWN = 5;

/** A fraction as `42.0 %`. */
export function pct(fraction: number): string {
  return `${(fraction * 100).toFixed(1)} %`;
}

/** Bytes as `12.5 GiB`. */
export function gib(bytes: number): string {
  return `${(bytes / GIB).toFixed(1)} GiB`;
}

/** `vm:101 node1 → node2` / `vm:101+vm:102 node1 → node2 (together)` / `… (temporary)`. */
export function describeMove(m: PlannedMove): string {
  const kind =
    m.kind === 'temporary' ? ', temporary: it moves on later' : m.kind === 'recover' ? ', recovered by HA' : '';
  const together = m.guests.length > 1 ? ', together (positive affinity)' : '';
  return `${m.guests.join('+')} ${m.source} → ${m.target} (${gib(m.bytes)}${together}${kind})`;
}

function balance(o: PlanObjective, imbalance: number | undefined): string {
  const ref = imbalance === undefined ? '' : `, reference imbalance ${pct(imbalance)}`;
  return `objective ${o.value.toFixed(4)} (highest cpu ${pct(o.cpu)}, highest memory ${pct(o.mem)})${ref}`;
}

function nodeTable(nodes: readonly NodeUse[]): string[] {
  const width = Math.max(4, ...nodes.map((n) => n.node.length));
  return nodes.map(
    (n) =>
      `  ${n.node.padEnd(width)}  cpu ${pct(n.cpu).padStart(7)}  memory ${pct(n.mem).padStart(7)}  ${n.guests} guests`,
  );
}

/** The text of a plan: the cluster, the balance before and after, the moves, the bound, the steps. */
export function planText(
  plan: PlacementPlan,
  context: { description: string; problems: readonly string[]; drain: readonly string[] },
): string[] {
  const lines = [`cluster: ${context.description}`];
  for (const p of context.problems) lines.push(`note: ${p}`);
  const what = context.drain.length > 0 ? `drain of ${context.drain.join(', ')}` : 'rebalancing';
  if (!plan.feasible) {
    lines.push(`plan (${what}): infeasible`);
    for (const r of plan.reasons) lines.push(`  - ${r}`);
    lines.push(`balance now: ${balance(plan.current, undefined)}`);
    for (const n of plan.notes) lines.push(`note: ${n}`);
    return lines;
  }
  const o = plan.objective;
  lines.push(`plan (${what}): feasible${plan.executable ? '' : ', not fully executable'}`);
  lines.push(`balance now:   ${balance(plan.current, plan.imbalance.current)}`);
  lines.push(`balance after: ${balance(o, plan.imbalance.target)}`);
  lines.push(
    `moves: ${o.moves} ${o.moves === 1 ? 'migration' : 'migrations'} in ${plan.steps.length} ${plan.steps.length === 1 ? 'step' : 'steps'}, ${gib(o.bytes)} of memory to copy`,
  );
  if (plan.drain) {
    const d = plan.drain;
    const others = d.makeRoom.length;
    lines.push(
      `drain: ${d.required} ${d.required === 1 ? 'guest leaves' : 'guests leave'} ${d.nodes.join(', ')}; ${others === 0 ? 'no other guest moves' : `${others} other ${others === 1 ? 'guest moves' : 'guests move'} to make room (notes below say why)`}; ${d.motions} ${d.motions === 1 ? 'motion' : 'motions'}`,
    );
  }
  lines.push(`bound: ${plan.bound.toFixed(4)}, gap ${pct(plan.gap)} (no placement has an objective below the bound)`);
  for (const v of plan.currentViolations.slice(0, MAX_VIOLATIONS_SHOWN))
    lines.push(`now broken (the plan fixes it): ${v}`);
  const more = plan.currentViolations.length - MAX_VIOLATIONS_SHOWN;
  if (more > 0) lines.push(`now broken (the plan fixes it): … and ${more} more (--json lists them all)`);
  plan.steps.forEach((step, i) => {
    lines.push(`step ${i + 1}:`);
    for (const m of step) lines.push(`  ${describeMove(m)}`);
  });
  if (plan.steps.length === 0) lines.push('nothing to move: the cluster is where the plan wants it');
  if (!plan.executable) lines.push(`blocked: ${plan.blocked ?? 'some motions could not be ordered safely'}`);
  for (const n of plan.notes) lines.push(`note: ${n}`);
  lines.push('nodes after:', ...nodeTable(plan.nodes));
  return lines;
}

/** The JSON of a plan (see apps/manager/README.md, *plan --json*). */
/** Where every guest was when the cluster was read, and when (`start` of a plan's JSON). */
export interface StartingPlacement {
  /** ISO time of the reading (simulated time on the simulator; a snapshot file's modification time). */
  readonly readAt: string;
  /** Guest → node, guests in byte order. */
  readonly placement: Readonly<Record<string, string>>;
}

/** The starting placement of a plan input, read at `readAt`. */
export function startingPlacement(input: PlanInput, readAt: string): StartingPlacement {
  const placement: Record<string, string> = {};
  for (const g of [...input.guests].sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0))) placement[g.id] = g.node;
  return { readAt, placement };
}

export function planJson(
  plan: PlacementPlan,
  context: {
    description: string;
    problems: readonly string[];
    drain: readonly string[];
    start?: StartingPlacement;
  },
): Record<string, unknown> {
  const common = {
    source: context.description,
    ...(context.start ? { start: context.start } : {}),
    problems: context.problems,
    drain: context.drain,
    current: plan.current,
    notes: plan.notes,
  };
  if (!plan.feasible) {
    return {
      feasible: false,
      reason: plan.reasons.join('; '),
      reasons: plan.reasons,
      placement: null,
      steps: [],
      objective: null,
      bound: null,
      gap: null,
      ...common,
    };
  }
  return {
    feasible: true,
    placement: Object.fromEntries(plan.placement),
    steps: plan.steps.map((step) =>
      step.map((m) => ({
        sid: m.guests[0],
        guests: m.guests,
        source: m.source,
        target: m.target,
        kind: m.kind,
        bytes: m.bytes,
      })),
    ),
    objective: plan.objective,
    bound: plan.bound,
    gap: plan.gap,
    imbalance: plan.imbalance,
    nodes: plan.nodes,
    executable: plan.executable,
    ...(plan.blocked === undefined ? {} : { blocked: plan.blocked }),
    currentViolations: plan.currentViolations,
    ...(plan.drain ? { drainPlan: plan.drain } : {}),
    ...common,
  };
}

/** The text of a batch placement. */
export function placeText(
  result: PlacementResult,
  context: { description: string; problems: readonly string[] },
): string[] {
  const lines = [`cluster: ${context.description}`];
  for (const p of context.problems) lines.push(`note: ${p}`);
  lines.push(`placed ${result.placed.size} of ${result.placed.size + result.unplaced.length} new guests:`);
  for (const [id, node] of result.placed) lines.push(`  ${id} → ${node}`);
  for (const u of result.unplaced) lines.push(`  ${u.id}: not placed: ${u.reason}`);
  lines.push(
    `balance after: highest cpu ${pct(result.after.cpu)}, highest memory ${pct(result.after.mem)}, reference imbalance ${pct(result.imbalance.current)} → ${pct(result.imbalance.after)}`,
  );
  lines.push('nodes after:', ...nodeTable(result.nodes));
  return lines;
}

export function placeJson(
  result: PlacementResult,
  context: { description: string; problems: readonly string[] },
): Record<string, unknown> {
  return {
    source: context.description,
    problems: context.problems,
    placed: Object.fromEntries(result.placed),
    unplaced: result.unplaced,
    after: result.after,
    imbalance: result.imbalance,
    nodes: result.nodes,
  };
}

/** The text of the N+1 report. */
export function whatIfText(
  report: NodeFailureReport,
  context: { description: string; problems: readonly string[] },
): string[] {
  const lines = [`cluster: ${context.description}`];
  for (const p of context.problems) lines.push(`note: ${p}`);
  lines.push(
    `what if one node fails: ${report.survivesAnyNodeFailure ? 'HA recovers the guests of any one node (N+1 holds)' : 'HA cannot recover the guests of every node (N+1 does not hold)'}`,
  );
  for (const c of report.cases) {
    const lost = c.lost.length > 0 ? `; lost with it (not HA): ${c.lost.join(', ')}` : '';
    if (c.recovered) {
      lines.push(
        `${c.node}: recovered (${c.recover.length} HA ${c.recover.length === 1 ? 'resource' : 'resources'}); after: highest cpu ${pct(c.after.cpu)}, highest memory ${pct(c.after.mem)}, reference imbalance ${pct(c.after.imbalance)}${lost}`,
      );
    } else {
      const other = c.placementExists
        ? 'another placement would recover them all (move guests first)'
        : 'no placement recovers them all';
      lines.push(`${c.node}: NOT recovered: ${c.unrecovered.map((u) => u.reason).join('; ')}; ${other}${lost}`);
    }
  }
  return lines;
}

export function whatIfJson(
  report: NodeFailureReport,
  context: { description: string; problems: readonly string[] },
): Record<string, unknown> {
  return {
    source: context.description,
    problems: context.problems,
    survivesAnyNodeFailure: report.survivesAnyNodeFailure,
    cases: report.cases.map((c) => ({
      node: c.node,
      recovered: c.recovered,
      recover: c.recover,
      lost: c.lost,
      placement: Object.fromEntries(c.placement),
      unrecovered: c.unrecovered,
      placementExists: c.placementExists,
      after: c.after,
    })),
  };
}
