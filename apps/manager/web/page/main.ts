/**
 * The status page of poise-manager: polls the daemon's JSON endpoints (relative URLs, so the
 * page works behind a proxy under a sub-path) and shows the cluster now, node load and
 * imbalance over time, the decision log, the motions, a running drain, the policy, the plan to
 * balance and the N+1 what-if. When the daemon stops answering, or its last read of the
 * cluster failed, it says so and keeps showing what it last had.
 */
import { parse, View } from 'vega';
import { compile } from 'vega-lite';
import { historyRows, imbalanceSpec, loadSpec, type MotionRow } from './charts';
import { bar, duration, el, fill, gib, pct } from './dom';

/** How often the page asks the daemon (ms). */
const POLL_MS = 2000;
/** Decision rows drawn at most (the filter narrows them). */
const MAX_DECISION_ROWS = 300;
/** Plan steps drawn at most. */
const MAX_PLAN_STEPS = 40;

// ---- what the endpoints answer (README, *The status page*) ----

interface Status {
  version: string;
  env: string;
  mode: string;
  active: boolean;
  notice: string | null;
  rounds: number;
  lastRound: { round: number; outcome: string; reason: string; message: string } | null;
  motionInFlight: { sid: string; source: string; target: string; kind: string; phase: string; issuedAt: number } | null;
  motionsLastHour: number;
  cluster: {
    settled?: boolean;
    reasons?: string[];
    resumeAt?: string | null;
    lastChange?: { what: string; at: string } | null;
  };
  pausedMotions: Record<string, { fault: string; nextCheckAt: string }>;
}
interface NodeNow {
  name: string;
  condition: string;
  state: 'settled' | 'maintenance' | 'failed';
  balanced: boolean;
  cpuCores: number | null;
  maxCpuCores: number | null;
  memBytes: number | null;
  maxMemBytes: number | null;
  cpu: number | null;
  mem: number | null;
  load: number | null;
  pressureCpu: number | null;
  pressureMem: number | null;
  guests: number;
  haResources: number;
}
interface ClusterDoc {
  thresholdPercent: number;
  read: {
    round: number;
    time: number;
    timeText: string;
    quorate: boolean;
    imbalance: number | null;
    nodes: NodeNow[];
  } | null;
  failure: { round: number; timeText: string; message: string } | null;
}
interface HistoryDoc {
  thresholdPercent: number;
  rounds: number[];
  time: number[];
  outcome: string[];
  imbalance: (number | null)[];
  nodes: Record<string, { cpu: (number | null)[]; mem: (number | null)[] }>;
}
interface Decision {
  round: number;
  time: number;
  timeText: string;
  outcome: string;
  reason: string;
  level: string;
  message: string;
  key?: string;
}
interface Motion {
  sid: string;
  kind: string;
  source: string;
  target: string;
  requestedAt: number | null;
  requestedAtText: string | null;
  result: 'in-flight' | 'succeeded' | 'failed';
  endedAtText: string | null;
  durationSeconds: number | null;
  reason: string | null;
}
interface PolicyDoc {
  mode: string;
  description: string;
  stages: string[];
  keys: { key: string; value: unknown; source: string | null }[];
  problems: string[];
}
interface DrainDoc {
  drain: {
    nodes: string[];
    state: string;
    total: number;
    succeeded: number;
    failed: number;
    inFlight: { sid: string; source: string; target: string; since: number }[];
    message: string;
    startedAtText: string;
    updatedAtText: string;
  } | null;
  problem?: string;
}
interface Objective {
  value: number;
  cpu: number;
  mem: number;
  moves: number;
  bytes: number;
}
interface PlanDoc {
  round: number;
  timeText: string;
  feasible: boolean;
  reasons?: string[];
  source: string;
  problems: string[];
  steps: { sid: string; guests: string[]; source: string; target: string; kind: string; bytes: number }[][];
  objective: Objective | null;
  current: Objective;
  imbalance?: { current: number; target: number };
  gap: number | null;
  nodes?: { node: string; cpu: number; mem: number; guests: number }[];
  executable?: boolean;
  blocked?: string;
}
interface WhatIfDoc {
  round: number;
  timeText: string;
  survivesAnyNodeFailure: boolean;
  cases: {
    node: string;
    recovered: boolean;
    recover: string[];
    lost: string[];
    unrecovered: { id: string; reason: string }[];
    after: { cpu: number; mem: number; imbalance?: number } | null;
  }[];
}

// ---- state ----

const page = {
  status: undefined as Status | undefined,
  cluster: undefined as ClusterDoc | undefined,
  history: undefined as HistoryDoc | undefined,
  decisions: [] as Decision[],
  motions: [] as Motion[],
  drain: undefined as DrainDoc | undefined,
  policy: undefined as PolicyDoc | undefined,
  plan: undefined as PlanDoc | { error: string } | undefined,
  whatIf: undefined as WhatIfDoc | { error: string } | undefined,
  /** When the daemon last answered, and since when it does not. */
  lastAnswer: undefined as Date | undefined,
  silentSince: undefined as Date | undefined,
  silentWhy: '',
  /** Shown window of the charts, seconds (0: all the history). */
  windowSeconds: 6 * 3600,
};

class HttpError extends Error {}

async function getJson<T>(path: string): Promise<T> {
  const res = await fetch(path, { cache: 'no-store' });
  const body = (await res.json()) as T & { error?: string };
  if (!res.ok) throw new HttpError(body.error ?? `${path}: HTTP ${res.status}`);
  return body;
}

// ---- rendering ----

function renderHeader(): void {
  const s = page.status;
  const live = page.silentSince === undefined;
  fill(
    'meta',
    s === undefined
      ? 'connecting…'
      : el(
          'span',
          {},
          el('span', { class: 'chip' }, `v${s.version}`),
          el('span', { class: 'chip' }, `env ${s.env}`),
          el('span', { class: `chip mode-${s.mode}` }, `mode ${s.mode}`),
          el('span', { class: `chip ${s.active ? 'ok' : 'warn'}` }, s.active ? 'active' : 'standby'),
          el('span', { class: 'chip' }, `round ${s.rounds}`),
          el('span', { class: `chip ${live ? 'ok' : 'bad'}`, id: 'liveness' }, live ? '● live' : '● no answer'),
        ),
  );
}

function renderBanners(): void {
  const banners: HTMLElement[] = [];
  if (page.silentSince !== undefined) {
    banners.push(
      el(
        'div',
        { class: 'banner bad', id: 'banner-silent' },
        `The daemon does not answer since ${page.silentSince.toLocaleTimeString()} (${page.silentWhy}); showing what it last said${page.lastAnswer ? ` at ${page.lastAnswer.toLocaleTimeString()}` : ''}. Trying again every ${POLL_MS / 1000} s.`,
      ),
    );
  }
  const failure = page.cluster?.failure;
  if (failure) {
    const read = page.cluster?.read;
    banners.push(
      el(
        'div',
        { class: 'banner bad', id: 'banner-read-failed' },
        el('strong', {}, `Reading the cluster failed in round ${failure.round} (${failure.timeText}). `),
        /[.!?]$/.test(failure.message) ? failure.message : `${failure.message}.`,
        read ? ` Showing the cluster as read in round ${read.round} (${read.timeText}).` : ' No round has read it yet.',
      ),
    );
  }
  const s = page.status;
  if (s?.notice) banners.push(el('div', { class: 'banner info' }, s.notice));
  for (const [kind, p] of Object.entries(s?.pausedMotions ?? {}))
    banners.push(
      el('div', { class: 'banner warn' }, `${kind} motions paused: ${p.fault}; tried again at ${p.nextCheckAt}`),
    );
  fill('banners', ...banners);
}

const STATE_WORDS: Record<NodeNow['state'], string> = {
  settled: 'settled',
  maintenance: 'maintenance',
  failed: 'failed',
};

function renderNodes(): void {
  const c = page.cluster;
  const s = page.status;
  if (!c?.read) {
    fill('nodes-summary', 'No round has read the cluster yet.');
    fill('node-grid');
    return;
  }
  const read = c.read;
  const threshold = c.thresholdPercent / 100;
  const over = read.imbalance !== null && read.imbalance > threshold;
  const settled = s?.cluster.settled;
  fill(
    'nodes-summary',
    el('span', { class: `big ${over ? 'warn' : 'ok'}`, id: 'imbalance-now' }, `imbalance ${pct(read.imbalance)}`),
    el(
      'span',
      { class: 'muted' },
      ` threshold ${c.thresholdPercent} % · read in round ${read.round} at ${read.timeText}`,
    ),
    read.quorate ? null : el('span', { class: 'chip bad' }, 'not quorate'),
    settled === false
      ? el(
          'div',
          { class: 'muted' },
          `not settled: ${(s?.cluster.reasons ?? []).join('; ') || `motions resume at ${s?.cluster.resumeAt ?? '?'}`}`,
        )
      : null,
  );
  fill(
    'node-grid',
    ...read.nodes.map((n) =>
      el(
        'article',
        { class: `node ${n.state}`, 'data-node': n.name },
        el(
          'header',
          {},
          el('strong', {}, n.name),
          el('span', { class: `chip state-${n.state}`, title: `condition: ${n.condition}` }, STATE_WORDS[n.state]),
        ),
        bar(n.cpu, 'CPU'),
        bar(n.mem, 'memory'),
        el(
          'div',
          { class: 'node-facts muted' },
          `${n.guests} guests (${n.haResources} HA)`,
          n.maxCpuCores !== null ? ` · ${(n.cpuCores ?? 0).toFixed(1)} of ${n.maxCpuCores} cores` : '',
          n.maxMemBytes !== null ? ` · ${gib(n.memBytes)} of ${gib(n.maxMemBytes)}` : '',
        ),
        el(
          'div',
          { class: 'node-facts muted' },
          n.pressureCpu === null && n.pressureMem === null
            ? 'pressure: not reported'
            : `pressure: CPU ${n.pressureCpu?.toFixed(1) ?? '–'} %, memory ${n.pressureMem?.toFixed(1) ?? '–'} %`,
          n.balanced ? '' : ' · not balanced (not online or in maintenance)',
        ),
      ),
    ),
  );
}

function renderMotion(): void {
  const m = page.status?.motionInFlight;
  const parts: HTMLElement[] = [];
  if (m)
    parts.push(
      el(
        'p',
        { id: 'motion-now' },
        el('span', { class: 'chip warn' }, 'in flight'),
        ` ${m.kind} ${m.sid} from ${m.source} to ${m.target} (${m.phase})`,
      ),
    );
  else parts.push(el('p', { class: 'muted', id: 'motion-now' }, 'No motion in flight.'));
  const d = page.drain;
  if (d?.drain) {
    const p = d.drain;
    const done = p.succeeded + p.failed;
    const ratio = p.total > 0 ? done / p.total : 1;
    parts.push(
      el(
        'div',
        { class: `drain ${p.state}`, id: 'drain' },
        el('strong', {}, `Drain of ${p.nodes.join(', ')}: ${p.state}`),
        ` — ${done} of ${p.total} motions (${p.succeeded} succeeded, ${p.failed} failed), since ${p.startedAtText}`,
        bar(ratio, 'progress'),
        ...p.inFlight.map((f) =>
          el('div', {}, el('span', { class: 'chip warn' }, 'moving'), ` ${f.sid} ${f.source} → ${f.target}`),
        ),
        el('div', { class: 'muted' }, `${p.message} (${p.updatedAtText})`),
      ),
    );
  }
  if (d?.problem) parts.push(el('p', { class: 'banner warn' }, d.problem));
  fill('motion-body', ...parts);
}

// ---- charts ----

interface Chart {
  key: string;
  view: View;
}
const charts = new Map<string, Chart>();

function chartWidth(id: string): number {
  const box = document.getElementById(id);
  return Math.max(200, Math.floor(box?.clientWidth ?? 800));
}

/** Renders a spec into the figure, rebuilding the view only when its key (width, nodes) changes. */
async function draw(
  id: string,
  key: string,
  spec: () => Parameters<typeof compile>[0],
  data: Record<string, object[]>,
): Promise<void> {
  let chart = charts.get(id);
  if (chart === undefined || chart.key !== key) {
    chart?.view.finalize();
    const target = document.getElementById(id)!;
    target.replaceChildren();
    const view = new View(parse(compile(spec()).spec), { renderer: 'svg', container: target, hover: true });
    chart = { key, view };
    charts.set(id, chart);
  }
  for (const [name, rows] of Object.entries(data)) chart.view.data(name, rows);
  await chart.view.runAsync();
}

async function renderCharts(): Promise<void> {
  const h = page.history;
  if (!h || h.time.length === 0) {
    fill('history-note', 'No rounds yet.');
    return;
  }
  const latest = h.time[h.time.length - 1]!;
  const from = page.windowSeconds > 0 ? latest - page.windowSeconds : -Infinity;
  const keep = h.time.map((t) => t >= from);
  const cut = <T>(xs: readonly T[]) => xs.filter((_, i) => keep[i]);
  const shown = {
    time: cut(h.time),
    imbalance: cut(h.imbalance),
    nodes: Object.fromEntries(Object.entries(h.nodes).map(([n, s]) => [n, { cpu: cut(s.cpu), mem: cut(s.mem) }])),
  };
  const rows = historyRows(shown);
  const motions: MotionRow[] = page.motions
    .filter((m) => m.requestedAt !== null && m.requestedAt >= from)
    .map((m) => ({ t: m.requestedAt! * 1000, label: `${m.sid} ${m.source} → ${m.target}`, result: m.result }));
  const nodes = Object.keys(shown.nodes);
  fill(
    'history-note',
    `${shown.time.length} rounds shown of ${h.time.length} kept; ${page.motions.length} motions this run.`,
  );
  const width = chartWidth('chart-imbalance');
  const span = shown.time.length > 0 ? shown.time[shown.time.length - 1]! - shown.time[0]! : 0;
  // the axis format follows the span: rebuilt when it crosses a step of a tenth
  const spanKey = Math.round(Math.log10(Math.max(1, span)) * 10);
  await draw(
    'chart-imbalance',
    `${width}:${h.thresholdPercent}:${spanKey}`,
    () => imbalanceSpec(width, h.thresholdPercent, span),
    {
      series: rows.imbalance,
      motions,
    },
  );
  for (const [id, resource] of [
    ['chart-cpu', 'CPU'],
    ['chart-mem', 'memory'],
  ] as const) {
    const w = chartWidth(id);
    await draw(id, `${w}:${spanKey}:${nodes.join(',')}`, () => loadSpec(w, nodes, resource, span), { load: rows.load });
  }
}

// ---- the decision log ----

function decisionFilter(): (d: Decision) => boolean {
  const outcome = (document.getElementById('filter-outcome') as HTMLSelectElement).value;
  const text = (document.getElementById('filter-text') as HTMLInputElement).value.trim().toLowerCase();
  const groups: Record<string, string[]> = {
    motions: ['move', 'would-move', 'refused'],
    skips: ['skip'],
    problems: ['error', 'refused', 'standby'],
  };
  return (d) =>
    (outcome === 'all' || (groups[outcome] ?? [outcome]).includes(d.outcome)) &&
    (text === '' || d.message.toLowerCase().includes(text) || d.reason.includes(text));
}

function renderDecisions(): void {
  const changesOnly = (document.getElementById('filter-changes') as HTMLInputElement).checked;
  const keep = decisionFilter();
  let rows = page.decisions.filter(keep);
  if (changesOnly) {
    const explanation = (d: Decision) => d.key ?? `${d.outcome}:${d.reason}`;
    rows = rows.filter((d, i) => i === 0 || explanation(rows[i - 1]!) !== explanation(d));
  }
  const shown = rows.slice(-MAX_DECISION_ROWS).reverse();
  fill(
    'decisions-note',
    `${rows.length} of ${page.decisions.length} rounds match${rows.length > shown.length ? `; the newest ${shown.length} shown` : ''}.`,
  );
  fill(
    'decisions-body',
    ...shown.map((d) =>
      el(
        'tr',
        { class: `outcome-${d.outcome} level-${d.level}`, 'data-round': d.round },
        el('td', { class: 'num' }, d.round),
        el('td', { class: 'time' }, d.timeText),
        el('td', {}, el('span', { class: `chip outcome-${d.outcome}` }, d.outcome)),
        el('td', { class: 'reason' }, d.reason),
        el('td', { class: 'message' }, d.message),
      ),
    ),
  );
}

function renderMotions(): void {
  const rows = [...page.motions].reverse();
  fill('motions-note', rows.length === 0 ? 'No motion this run.' : `${rows.length} motions this run, newest first.`);
  fill(
    'motions-body',
    ...rows.map((m) =>
      el(
        'tr',
        { class: `result-${m.result}`, 'data-sid': m.sid },
        el('td', {}, `${m.kind} ${m.sid}`),
        el('td', {}, `${m.source} → ${m.target}`),
        el('td', { class: 'time' }, m.requestedAtText ?? '–'),
        el('td', { class: 'num' }, duration(m.durationSeconds)),
        el('td', {}, el('span', { class: `chip result-${m.result}` }, m.result)),
        el('td', { class: 'message' }, m.reason ?? ''),
      ),
    ),
  );
}

// ---- policy, plan, what-if ----

function renderPolicy(): void {
  const p = page.policy;
  if (!p) return;
  fill(
    'policy-body',
    el('p', {}, el('strong', {}, `mode ${p.mode}`), ' · ', p.description.split(': ').slice(1).join(': ')),
    el('p', { class: 'stages' }, ...p.stages.flatMap((s, i) => [i > 0 ? ' → ' : '', el('code', {}, s)])),
    el(
      'div',
      { class: 'scroll' },
      el(
        'table',
        { id: 'policy-keys' },
        el('thead', {}, el('tr', {}, el('th', {}, 'key'), el('th', {}, 'value'), el('th', {}, 'from'))),
        el(
          'tbody',
          {},
          ...p.keys.map((k) =>
            el(
              'tr',
              {},
              el('td', {}, el('code', {}, k.key)),
              el('td', {}, String(k.value)),
              el('td', {}, k.source ?? '–'),
            ),
          ),
        ),
      ),
    ),
    ...p.problems.map((x) => el('p', { class: 'banner warn' }, x)),
  );
}

function balanceLine(o: Objective, imbalance: number | undefined): string {
  return `highest CPU ${pct(o.cpu)}, highest memory ${pct(o.mem)}${imbalance === undefined ? '' : `, reference imbalance ${pct(imbalance)}`}`;
}

function renderPlan(): void {
  const p = page.plan;
  if (p === undefined) {
    fill('plan-body', 'computing…');
  } else if ('error' in p) {
    fill('plan-body', el('p', { class: 'muted' }, p.error));
  } else {
    const steps = p.steps.slice(0, MAX_PLAN_STEPS);
    fill(
      'plan-body',
      el('p', { class: 'muted' }, `From round ${p.round} (${p.timeText}); nothing is requested. ${p.source}`),
      (page.cluster?.read?.round ?? p.round) > p.round
        ? el(
            'p',
            { class: 'banner info', id: 'plan-stale' },
            `The cluster was read again since (round ${page.cluster?.read?.round}): recompute for a plan from now.`,
          )
        : null,
      ...p.problems.map((x) => el('p', { class: 'muted' }, `note: ${x}`)),
      p.feasible && p.objective
        ? el(
            'div',
            {},
            el(
              'p',
              { id: 'plan-summary' },
              el(
                'strong',
                {},
                p.steps.length === 0
                  ? 'Balanced: nothing to move.'
                  : `${p.objective.moves} migrations in ${p.steps.length} steps, ${gib(p.objective.bytes)} to copy.`,
              ),
            ),
            el('p', {}, `now: ${balanceLine(p.current, p.imbalance?.current)}`),
            el('p', {}, `after: ${balanceLine(p.objective, p.imbalance?.target)}`),
            p.executable === false
              ? el('p', { class: 'banner warn' }, `blocked: ${p.blocked ?? 'some motions cannot be ordered safely'}`)
              : null,
            el(
              'ol',
              { id: 'plan-steps' },
              ...steps.map((step) =>
                el(
                  'li',
                  {},
                  ...step.map((m) =>
                    el(
                      'div',
                      {},
                      `${m.guests.join(' + ')} ${m.source} → ${m.target} (${gib(m.bytes)})${m.kind === 'move' ? '' : ` [${m.kind}]`}`,
                    ),
                  ),
                ),
              ),
            ),
            p.steps.length > steps.length
              ? el(
                  'p',
                  { class: 'muted' },
                  `… and ${p.steps.length - steps.length} more steps (api/plan lists them all)`,
                )
              : null,
          )
        : el('p', { id: 'plan-summary', class: 'banner warn' }, `infeasible: ${(p.reasons ?? []).join('; ')}`),
    );
  }
  const w = page.whatIf;
  if (w === undefined) fill('whatif-body', 'computing…');
  else if ('error' in w) fill('whatif-body', el('p', { class: 'muted' }, w.error));
  else
    fill(
      'whatif-body',
      el(
        'p',
        { id: 'whatif-summary' },
        el(
          'span',
          { class: `chip ${w.survivesAnyNodeFailure ? 'ok' : 'bad'}` },
          w.survivesAnyNodeFailure ? 'N+1 holds' : 'N+1 does not hold',
        ),
        w.survivesAnyNodeFailure
          ? ' HA recovers the guests of any one node.'
          : ' Some node’s guests would not all be recovered.',
      ),
      el(
        'ul',
        {},
        ...w.cases.map((c) =>
          el(
            'li',
            {},
            el('strong', {}, c.node),
            c.recovered
              ? `: recovered (${c.recover.length} HA resources)`
              : `: not all recovered — ${c.unrecovered.map((u) => `${u.id} (${u.reason})`).join(', ')}`,
            c.lost.length > 0 ? `; lost (not HA): ${c.lost.join(', ')}` : '',
            c.after ? `; after: highest CPU ${pct(c.after.cpu)}, highest memory ${pct(c.after.mem)}` : '',
          ),
        ),
      ),
    );
}

let planLoading = false;

async function loadPlan(): Promise<void> {
  planLoading = true;
  page.plan = undefined;
  page.whatIf = undefined;
  renderPlan();
  try {
    const [plan, whatIf] = await Promise.allSettled([getJson<PlanDoc>('api/plan'), getJson<WhatIfDoc>('api/what-if')]);
    page.plan = plan.status === 'fulfilled' ? plan.value : { error: String((plan.reason as Error).message) };
    page.whatIf = whatIf.status === 'fulfilled' ? whatIf.value : { error: String((whatIf.reason as Error).message) };
  } finally {
    planLoading = false;
  }
  renderPlan();
}

// ---- polling ----

async function poll(): Promise<void> {
  const lastRound = page.decisions.at(-1)?.round;
  const lastHistoryRound = page.history?.rounds.at(-1);
  const historyQuery = lastHistoryRound === undefined ? 'api/history' : `api/history?after=${lastHistoryRound}`;
  const results = await Promise.allSettled([
    getJson<Status>('status'),
    getJson<ClusterDoc>('api/cluster'),
    getJson<HistoryDoc>(historyQuery),
    getJson<{ decisions: Decision[] }>(
      lastRound === undefined ? 'api/decisions?limit=5000' : `api/decisions?after=${lastRound}&limit=5000`,
    ),
    getJson<{ motions: Motion[] }>('api/motions'),
    getJson<DrainDoc>('api/drain'),
  ]);
  const [status, cluster, history, decisions, motions, drain] = results;
  const failed = results.find((r) => r.status === 'rejected');
  if (failed) {
    page.silentSince ??= new Date();
    page.silentWhy = String((failed.reason as Error)?.message ?? failed.reason);
  } else {
    page.silentSince = undefined;
    page.lastAnswer = new Date();
  }
  if (status.status === 'fulfilled') {
    const before = page.status;
    page.status = status.value;
    // a new daemon run (its rounds restarted): start the history and the log afresh
    if (before && status.value.rounds < before.rounds) {
      page.history = undefined;
      page.decisions = [];
    }
  }
  if (cluster.status === 'fulfilled') page.cluster = cluster.value;
  if (history.status === 'fulfilled') {
    const h = history.value;
    const old = page.history;
    if (old === undefined) page.history = h;
    else if (h.rounds.length > 0) {
      const names = new Set([...Object.keys(old.nodes), ...Object.keys(h.nodes)]);
      const nodes: HistoryDoc['nodes'] = {};
      for (const n of names) {
        const a = old.nodes[n] ?? { cpu: old.rounds.map(() => null), mem: old.rounds.map(() => null) };
        const b = h.nodes[n] ?? { cpu: h.rounds.map(() => null), mem: h.rounds.map(() => null) };
        nodes[n] = { cpu: [...a.cpu, ...b.cpu], mem: [...a.mem, ...b.mem] };
      }
      page.history = {
        ...h,
        rounds: [...old.rounds, ...h.rounds],
        time: [...old.time, ...h.time],
        outcome: [...old.outcome, ...h.outcome],
        imbalance: [...old.imbalance, ...h.imbalance],
        nodes,
      };
    }
  }
  if (page.plan !== undefined && !('error' in page.plan)) renderPlan();
  if (decisions.status === 'fulfilled')
    page.decisions = [...page.decisions, ...decisions.value.decisions].slice(-20000);
  if (motions.status === 'fulfilled') page.motions = motions.value.motions;
  if (drain.status === 'fulfilled') page.drain = drain.value;
  // the plan is computed once the daemon has read the cluster, then when asked again
  const noPlanYet = page.plan !== undefined && 'error' in page.plan && page.plan.error.startsWith('no round has read');
  if (page.cluster?.read && (page.plan === undefined || noPlanYet) && !planLoading) void loadPlan();
  if (page.policy === undefined) {
    try {
      page.policy = await getJson<PolicyDoc>('api/policy');
    } catch {
      // next time
    }
  }
  renderAll();
}

function renderAll(): void {
  renderHeader();
  renderBanners();
  renderNodes();
  renderMotion();
  renderDecisions();
  renderMotions();
  renderPolicy();
  document.body.dataset.round = String(page.status?.rounds ?? 0);
  renderCharts().catch((err: unknown) => fill('history-note', `the charts failed: ${String(err)}`));
}

async function loop(): Promise<void> {
  try {
    await poll();
  } catch (err) {
    page.silentSince ??= new Date();
    page.silentWhy = String(err);
    renderAll();
  }
  setTimeout(() => void loop(), POLL_MS);
}

function start(): void {
  for (const id of ['filter-outcome', 'filter-text', 'filter-changes'])
    document.getElementById(id)?.addEventListener('input', renderDecisions);
  for (const b of document.querySelectorAll<HTMLButtonElement>('button[data-window]')) {
    b.addEventListener('click', () => {
      page.windowSeconds = Number(b.dataset.window);
      for (const other of document.querySelectorAll('button[data-window]')) other.classList.toggle('on', other === b);
      void renderCharts();
    });
  }
  document.getElementById('plan-refresh')?.addEventListener('click', () => void loadPlan());
  let resizeTimer: number | undefined;
  window.addEventListener('resize', () => {
    window.clearTimeout(resizeTimer);
    resizeTimer = window.setTimeout(() => void renderCharts(), 200);
  });
  void loop();
}

start();
