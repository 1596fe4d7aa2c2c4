/**
 * The status page of poise-manager: polls the daemon's JSON endpoints (relative URLs, so the
 * page works behind a proxy under a sub-path) and shows the cluster now, a running drain, node
 * load and imbalance over time, the decision log, the motions, the policy, the plan to balance
 * and the N+1 what-if. A poll asks only for what is new (rounds after the last it has; the
 * other documents `unless` they are the version it holds) and redraws only what changed, in
 * place (`fill` keeps the DOM that did not change, so a text selection survives). When the
 * daemon stops answering, or its last read of the cluster failed, it says so and keeps showing
 * what it last had; once the run has ended it says so and polls slowly.
 */
import { parse, View } from 'vega';
import { compile } from 'vega-lite';
import { imbalanceSpec, loadSpec, MAX_NODE_LINES, type MotionRow } from './charts';
import { bar, duration, el, fill, gib, pct } from './dom';
import { drawHeatmap, heatmapBuckets } from './heatmap';
import { naturalCompare, naturalSort } from './order';
import { chartWindow, type HistoryDoc, HistoryStore, minMaxLine, sliceStats } from './series';

/** How often the page asks the daemon (ms). */
const POLL_MS = 2000;
/** The longest wait between polls (ms): a daemon that does not answer, a run that has ended. */
const SLOW_POLL_MS = 30_000;
/** Rounds the page holds at most (the daemon's own bound: a day at 5 s). */
const HISTORY_MAX_ROUNDS = 17_280;
/** Decisions the page holds at most (the newest). */
const MAX_DECISIONS = 20_000;
/** Decision rows on a page of the table (older ones a click away). */
const DECISION_PAGE_ROWS = 100;
/** Motion rows on a page of the table. */
const MOTION_PAGE_ROWS = 25;
/** Plan steps shown open; up to {@link MAX_PLAN_STEPS} more behind a click. */
const PLAN_STEPS_OPEN = 8;
/** Plan steps drawn at most (api/plan lists them all). */
const MAX_PLAN_STEPS = 40;
/** Names listed of a what-if case's lost or unrecovered guests (the rest counted). */
const WHATIF_NAMES = 4;
/**
 * Rounds of history per request when the page fills in older ones (at 64 nodes about 2 MB of
 * JSON: parsed in a few tens of ms, not one long task for a day).
 */
const HISTORY_PIECE_ROUNDS = 2000;
/** Marks a Vega chart draws as SVG at most; beyond, on a canvas. */
const SVG_MAX_MARKS = 1500;
/** Slices of a line chart at most per CSS pixel of its width (each keeps its lowest and highest value). */
const LINE_SLICES_PER_PX = 0.5;

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
  /** `ha`, `guest` (the daemon's own) or `drain` (a drain's). */
  via: string;
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
    processGone?: boolean;
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

interface RunDoc {
  intervalSeconds: number;
  ended: { ok: boolean; message: string } | null;
}
/** What a versioned endpoint answers when asked `unless=<the version held>` and nothing changed. */
interface Unchanged {
  unchanged: true;
  version: string;
}

// ---- state ----

/** The parts of the page a poll can change; each render draws only those that did. */
type Part =
  | 'status'
  | 'run'
  | 'cluster'
  | 'history'
  | 'decisions'
  | 'motions'
  | 'drain'
  | 'policy'
  | 'plan'
  | 'liveness';

const page = {
  status: undefined as Status | undefined,
  statusText: '',
  run: undefined as RunDoc | undefined,
  cluster: undefined as ClusterDoc | undefined,
  history: new HistoryStore(HISTORY_MAX_ROUNDS),
  decisions: [] as Decision[],
  motions: [] as Motion[],
  drain: undefined as DrainDoc | undefined,
  policy: undefined as PolicyDoc | undefined,
  plan: undefined as PlanDoc | { error: string } | undefined,
  whatIf: undefined as WhatIfDoc | { error: string } | undefined,
  /** The version of each versioned document held (asked `unless=` it). */
  versions: new Map<string, string>(),
  /** When the daemon last answered, and since when it does not. */
  lastAnswer: undefined as Date | undefined,
  silentSince: undefined as Date | undefined,
  silentWhy: '',
  /** Polls in a row without an answer. */
  failures: 0,
  /** Shown window of the charts, seconds (0: all the history). */
  windowSeconds: 6 * 3600,
  /** The page of each table (0: the newest rows). */
  decisionsPage: 0,
  motionsPage: 0,
};

class HttpError extends Error {}

async function getText(path: string): Promise<string> {
  const res = await fetch(path, { cache: 'no-store' });
  const text = await res.text();
  if (!res.ok) {
    let message = `${path}: HTTP ${res.status}`;
    try {
      message = (JSON.parse(text) as { error?: string }).error ?? message;
    } catch {
      // not JSON: the status says it
    }
    throw new HttpError(message);
  }
  return text;
}

async function getJson<T>(path: string): Promise<T> {
  return JSON.parse(await getText(path)) as T;
}

/** A versioned document: the new one, or `undefined` when it is the version held. */
async function getVersioned<T>(path: string): Promise<T | undefined> {
  const held = page.versions.get(path);
  const doc = await getJson<(T & { version: string }) | Unchanged>(
    held === undefined ? path : `${path}${path.includes('?') ? '&' : '?'}unless=${held}`,
  );
  if ('unchanged' in doc && doc.unchanged === true) return undefined;
  page.versions.set(path, doc.version);
  return doc as T;
}

// ---- the drain ----

/** The drain now, in figures: moved, failed, in flight, left; whether it still runs. */
function drainFigures(d: NonNullable<DrainDoc['drain']>) {
  const inFlight = d.inFlight.length;
  return {
    moved: d.succeeded,
    failed: d.failed,
    inFlight,
    left: Math.max(0, d.total - d.succeeded - d.failed - inFlight),
    running: d.state === 'running' && d.processGone !== true,
  };
}

/** The nodes a running drain empties. */
function drainingNodes(): Set<string> {
  const d = page.drain?.drain;
  return d && drainFigures(d).running ? new Set(d.nodes) : new Set();
}

// ---- rendering ----

/** The run has ended (the environment said so): nothing more will change. */
function ended(): RunDoc['ended'] {
  return page.run?.ended ?? null;
}

function renderHeader(): void {
  const s = page.status;
  const live = page.silentSince === undefined;
  const end = ended();
  const liveness = !live ? ['bad', '● no answer'] : end ? ['warn', '● ended'] : ['ok', '● live'];
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
          // active/standby is the daemon's now: not said of a daemon that ended or does not answer
          live && !end
            ? el('span', { class: `chip ${s.active ? 'ok' : 'warn'}` }, s.active ? 'active' : 'standby')
            : null,
          el('span', { class: 'chip' }, `round ${s.rounds}`),
          el('span', { class: `chip ${liveness[0]}`, id: 'liveness' }, liveness[1]),
        ),
  );
}

function renderBanners(): void {
  const banners: HTMLElement[] = [];
  const end = ended();
  if (page.silentSince !== undefined) {
    banners.push(
      el(
        'div',
        { class: 'banner bad', id: 'banner-silent' },
        `The daemon does not answer since ${page.silentSince.toLocaleTimeString()} (${page.silentWhy}); showing what it last said${page.lastAnswer ? ` at ${page.lastAnswer.toLocaleTimeString()}` : ''}. Trying again every ${Math.round(nextPollMs() / 1000)} s.`,
      ),
    );
  } else if (end) {
    banners.push(
      el(
        'div',
        { class: `banner ${end.ok ? 'info' : 'warn'}`, id: 'banner-ended' },
        el('strong', {}, 'The run has ended: '),
        /[.!?]$/.test(end.message) ? end.message : `${end.message}.`,
        ` Nothing more changes; the daemon keeps this page up until it is stopped (the page checks every ${SLOW_POLL_MS / 1000} s).`,
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
  const d = page.drain?.drain;
  const running = d ? drainFigures(d) : undefined;
  if (d && running?.running) {
    // what runs: a drain (its own process) moves guests, whatever the daemon's mode
    const what = `a drain of ${naturalSort(d.nodes).join(', ')} is running: ${running.moved} of ${d.total} moved${running.inFlight > 0 ? `, ${running.inFlight} in flight` : ''}${running.failed > 0 ? `, ${running.failed} failed` : ''}`;
    const observe = s?.mode === 'observe';
    banners.push(
      el(
        'div',
        { class: 'banner warn', id: 'banner-drain' },
        observe ? `observe mode — ${what}. ` : `${what[0]!.toUpperCase()}${what.slice(1)}. `,
        observe
          ? 'The daemon itself moves nothing; the drain (poise-manager drain --execute) moves the guests.'
          : 'The drain (poise-manager drain --execute) moves the guests; the daemon goes on balancing.',
      ),
    );
    if (s?.notice && !(observe && s.notice.startsWith('observe mode')))
      banners.push(el('div', { class: 'banner info' }, s.notice));
  } else if (s?.notice) banners.push(el('div', { class: 'banner info', id: 'banner-notice' }, s.notice));
  for (const [kind, p] of Object.entries(s?.pausedMotions ?? {}))
    banners.push(
      el('div', { class: 'banner warn' }, `${kind} motions paused: ${p.fault}; tried again at ${p.nextCheckAt}`),
    );
  const panel = drainPanel();
  if (panel) banners.push(panel);
  if (page.drain?.problem) banners.push(el('p', { class: 'banner warn', id: 'drain-problem' }, page.drain.problem));
  fill('banners', ...banners);
}

/** The drain's progress (running, or the last one): moved, in flight, left, failed, and how it stopped. */
function drainPanel(): HTMLElement | null {
  const d = page.drain?.drain;
  if (!d) return null;
  const f = drainFigures(d);
  const state = d.processGone ? 'gone' : d.state;
  const words: Record<string, string> = {
    running: 'running',
    done: 'done',
    stopped: 'stopped',
    gone: 'its process is gone',
  };
  return el(
    'div',
    { class: `drain ${state}`, id: 'drain' },
    el('strong', {}, `Drain of ${naturalSort(d.nodes).join(', ')}: ${words[state] ?? state}`),
    ` — ${f.moved} of ${d.total} moved, ${f.inFlight} in flight, ${f.left} left${f.failed > 0 ? `, ${f.failed} failed` : ''}; since ${d.startedAtText}`,
    bar(d.total > 0 ? f.moved / d.total : 1, 'moved'),
    ...d.inFlight.map((m) =>
      el(
        'div',
        { 'data-key': m.sid },
        el('span', { class: 'chip warn' }, 'moving'),
        ` ${m.sid} ${m.source} → ${m.target}`,
      ),
    ),
    el('div', { class: d.state === 'stopped' ? 'drain-why' : 'muted' }, `${d.message} (${d.updatedAtText})`),
  );
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
  const draining = drainingNodes();
  fill(
    'nodes-summary',
    el('span', { class: `big ${over ? 'warn' : 'ok'}`, id: 'imbalance-now' }, `imbalance ${pct(read.imbalance)}`),
    el(
      'span',
      { class: 'muted' },
      ` threshold ${c.thresholdPercent} % · ${read.nodes.length} nodes · read in round ${read.round} at ${read.timeText}`,
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
  const nodes = [...read.nodes].sort((a, b) => naturalCompare(a.name, b.name));
  const grid = fill('node-grid', ...nodes.map((n) => nodeCard(n, draining.has(n.name))));
  // the cards in the page are those drawn before, made like the new ones: those are held
  for (const card of grid.children) {
    const name = card.getAttribute('data-key');
    const held = name === null ? undefined : cards.get(name);
    if (held !== undefined) cards.set(name!, { from: held.from, card: card as HTMLElement });
  }
  for (const name of cards.keys()) if (!read.nodes.some((n) => n.name === name)) cards.delete(name);
}

/** The card of each node as last drawn, with what it was drawn from: a node that did not change is not built again. */
const cards = new Map<string, { readonly from: string; readonly card: HTMLElement }>();

function nodeCard(n: NodeNow, draining: boolean): HTMLElement {
  const from = `${JSON.stringify(n)}:${draining}`;
  const held = cards.get(n.name);
  if (held?.from === from && held.card.isConnected) return held.card;
  const card = buildNodeCard(n, draining);
  cards.set(n.name, { from, card });
  return card;
}

function buildNodeCard(n: NodeNow, draining: boolean): HTMLElement {
  return el(
    'article',
    { class: `node ${n.state}${draining ? ' draining' : ''}`, 'data-node': n.name, 'data-key': n.name },
    el(
      'header',
      {},
      el('strong', {}, n.name),
      el(
        'span',
        {},
        draining ? el('span', { class: 'chip warn drain-chip', title: 'a drain empties this node' }, 'draining') : null,
        el('span', { class: `chip state-${n.state}`, title: `condition: ${n.condition}` }, STATE_WORDS[n.state]),
      ),
    ),
    bar(n.cpu, 'CPU'),
    bar(n.mem, 'memory'),
    el(
      'div',
      { class: 'node-facts muted' },
      `${n.guests} ${n.guests === 1 ? 'guest' : 'guests'} (${n.haResources} HA)`,
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
  );
}

function renderMotion(): void {
  const m = page.status?.motionInFlight;
  fill(
    'motion-body',
    m
      ? el(
          'p',
          { id: 'motion-now' },
          el('span', { class: 'chip warn' }, 'in flight'),
          ` ${m.kind} ${m.sid} from ${m.source} to ${m.target} (${m.phase})`,
        )
      : el('p', { class: 'muted', id: 'motion-now' }, 'No motion of the daemon in flight.'),
  );
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

/**
 * Renders a spec into the figure, rebuilding the view only when its key (width, nodes,
 * renderer) changes. SVG for a few hundred marks; a canvas beyond (a day of motions as SVG
 * paths is a long task at every redraw).
 */
async function draw(
  id: string,
  key: string,
  spec: () => Parameters<typeof compile>[0],
  data: Record<string, object[]>,
  renderer: 'svg' | 'canvas' = 'svg',
): Promise<void> {
  let chart = charts.get(id);
  if (chart === undefined || chart.key !== `${renderer}:${key}`) {
    chart?.view.finalize();
    const target = document.getElementById(id)!;
    target.replaceChildren();
    const view = new View(parse(compile(spec()).spec), { renderer, container: target, hover: true });
    chart = { key: `${renderer}:${key}`, view };
    charts.set(id, chart);
  }
  for (const [name, rows] of Object.entries(data)) chart.view.data(name, rows);
  await chart.view.runAsync();
}

/** A figure that becomes a heatmap: its Vega view (if it had one) goes. */
function dropView(id: string): void {
  const chart = charts.get(id);
  if (chart === undefined) return;
  chart.view.finalize();
  charts.delete(id);
  document.getElementById(id)!.replaceChildren();
}

/** `14:05` (or `14:05:30` on an axis of ticks less than a minute apart), UTC like the log. */
function clockText(seconds: number, stepSeconds: number): string {
  const iso = new Date(seconds * 1000).toISOString();
  return stepSeconds < 60 ? iso.slice(11, 19) : iso.slice(11, 16);
}

const percent = (ratio: number | null) => (ratio === null ? null : Math.round(ratio * 10000) / 100);

/** What the charts last drew (history version, window, width, motions): nothing new, nothing drawn. */
let chartsDrawn = '';

async function renderCharts(): Promise<void> {
  const h = page.history;
  if (h.length === 0) {
    fill('history-note', 'No rounds yet.');
    return;
  }
  const width = chartWidth('chart-imbalance');
  const widths = { cpu: chartWidth('chart-cpu'), mem: chartWidth('chart-mem') };
  const w = chartWindow(h, page.windowSeconds, Math.floor(width * LINE_SLICES_PER_PX));
  const rounds = w.end - w.start;
  fill(
    'history-note',
    `${rounds} rounds shown of ${h.length} kept${w.buckets < rounds ? ` (each point the lowest and highest of ${Math.ceil(rounds / w.buckets)} rounds)` : ''}; ${page.motions.length} motions this run.${backfill.busy ? ' Fetching older rounds…' : ''}`,
  );
  // the rounds shown (older ones filled in outside the window change nothing drawn)
  const drawnKey = `${h.rounds[w.start]}:${h.lastRound}:${page.windowSeconds}:${width}:${widths.cpu}:${widths.mem}:${page.versions.get('api/motions') ?? ''}`;
  if (drawnKey === chartsDrawn) return;
  chartsDrawn = drawnKey;
  const span = w.to - w.from;
  const motions: MotionRow[] = page.motions
    .filter((m) => m.requestedAt !== null && m.requestedAt >= w.from)
    .map((m) => ({
      t: m.requestedAt! * 1000,
      label: `${m.sid} ${m.source} → ${m.target}`,
      result: m.result,
      via: m.via,
    }));
  const nodes = naturalSort(h.nodes.keys());
  // the axis format follows the span: rebuilt when it crosses a step of a tenth
  const spanKey = Math.round(Math.log10(Math.max(1, span)) * 10);
  const series = minMaxLine(h.time, h.imbalance, w).map((p) => ({ t: p.t * 1000, imbalance: percent(p.v) }));
  // each chart in a task of its own: the page answers between them
  await nextTask();
  await draw(
    'chart-imbalance',
    `${width}:${h.thresholdPercent}:${spanKey}`,
    () => imbalanceSpec(width, h.thresholdPercent, span),
    { series, motions },
    motions.length + series.length > SVG_MAX_MARKS ? 'canvas' : 'svg',
  );
  for (const [id, resource, column, fw] of [
    ['chart-cpu', 'CPU', 'cpu', widths.cpu],
    ['chart-mem', 'memory', 'mem', widths.mem],
  ] as const) {
    await nextTask();
    if (nodes.length > MAX_NODE_LINES) {
      dropView(id);
      const hw = chartWindow(h, page.windowSeconds, heatmapBuckets(fw));
      const stats = nodes.map((n) => sliceStats(h.time, h.nodes.get(n)![column], hw));
      drawHeatmap(document.getElementById(id)!, fw, {
        title: `Node ${resource}`,
        subtitle: `highest use in each slice, percent of the node\u2019s capacity; ${nodes.length} nodes`,
        nodes,
        from: hw.from,
        to: hw.to,
        buckets: hw.buckets,
        max: stats.map((s) => s.max),
        mean: stats.map((s) => s.mean),
        timeText: clockText,
      });
      continue;
    }
    const lw = chartWindow(h, page.windowSeconds, Math.floor(fw * LINE_SLICES_PER_PX));
    const load = nodes.flatMap((node) =>
      minMaxLine(h.time, h.nodes.get(node)![column], lw).map((p) => ({
        t: p.t * 1000,
        node,
        resource,
        load: percent(p.v),
      })),
    );
    await draw(id, `${fw}:${spanKey}:${nodes.join(',')}`, () => loadSpec(fw, nodes, resource, span), { load });
  }
}

/** Resolves in a task of its own (after what the browser has queued: input, rendering). */
function nextTask(): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, 0));
}

let chartsRunning: Promise<void> | undefined;
let chartsAgain = false;

/** Draws the charts, one drawing at a time (one asked for meanwhile runs after). */
function scheduleCharts(): Promise<void> {
  if (chartsRunning) {
    chartsAgain = true;
    return chartsRunning;
  }
  chartsRunning = (async () => {
    try {
      do {
        chartsAgain = false;
        await renderCharts();
      } while (chartsAgain);
    } catch (err) {
      fill('history-note', `the charts failed: ${String(err)}`);
    } finally {
      chartsRunning = undefined;
    }
  })();
  return chartsRunning;
}

// ---- the decision log and the motions ----

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

/** A pager: `newer` / `older` buttons (their clicks handled by the table's listener) and where one is. */
function pager(which: string, pageIndex: number, rows: number, perPage: number): HTMLElement | null {
  const pages = Math.max(1, Math.ceil(rows / perPage));
  if (pages <= 1) return null;
  const first = pageIndex * perPage + 1;
  const last = Math.min(rows, (pageIndex + 1) * perPage);
  return el(
    'div',
    { class: 'pager' },
    el('button', { type: 'button', 'data-page': `${which}:newest`, disabled: pageIndex === 0 }, 'newest'),
    el('button', { type: 'button', 'data-page': `${which}:newer`, disabled: pageIndex === 0 }, 'newer'),
    el('span', { class: 'muted' }, ` rows ${first}–${last} of ${rows} (page ${pageIndex + 1} of ${pages}) `),
    el('button', { type: 'button', 'data-page': `${which}:older`, disabled: pageIndex >= pages - 1 }, 'older'),
  );
}

function renderDecisions(): void {
  const changesOnly = (document.getElementById('filter-changes') as HTMLInputElement).checked;
  const keep = decisionFilter();
  let rows = page.decisions.filter(keep);
  if (changesOnly) {
    const explanation = (d: Decision) => d.key ?? `${d.outcome}:${d.reason}`;
    rows = rows.filter((d, i) => i === 0 || explanation(rows[i - 1]!) !== explanation(d));
  }
  const pages = Math.max(1, Math.ceil(rows.length / DECISION_PAGE_ROWS));
  page.decisionsPage = Math.min(page.decisionsPage, pages - 1);
  const end = rows.length - page.decisionsPage * DECISION_PAGE_ROWS;
  const shown = rows.slice(Math.max(0, end - DECISION_PAGE_ROWS), end).reverse();
  fill('decisions-note', `${rows.length} of ${page.decisions.length} rounds match, newest first.`);
  fill('decisions-pager', pager('decisions', page.decisionsPage, rows.length, DECISION_PAGE_ROWS));
  fill(
    'decisions-body',
    ...shown.map((d) =>
      el(
        'tr',
        { class: `outcome-${d.outcome} level-${d.level}`, 'data-round': d.round, 'data-key': d.round },
        el('td', { class: 'num' }, d.round),
        el('td', { class: 'time' }, d.timeText),
        el('td', {}, el('span', { class: `chip outcome-${d.outcome}` }, d.outcome)),
        el('td', { class: 'reason' }, d.reason),
        el('td', { class: 'message' }, d.message),
      ),
    ),
  );
}

/** Who asked for a motion, in words. */
const VIA_WORDS: Record<string, string> = { ha: 'daemon (HA)', guest: 'daemon (guest)', drain: 'drain' };

function renderMotions(): void {
  const all = [...page.motions].reverse();
  const pages = Math.max(1, Math.ceil(all.length / MOTION_PAGE_ROWS));
  page.motionsPage = Math.min(page.motionsPage, pages - 1);
  const rows = all.slice(page.motionsPage * MOTION_PAGE_ROWS, (page.motionsPage + 1) * MOTION_PAGE_ROWS);
  const byDrain = page.motions.filter((m) => m.via === 'drain').length;
  fill(
    'motions-note',
    all.length === 0
      ? 'No motion this run.'
      : `${all.length} motions this run${byDrain > 0 ? ` (${byDrain} by a drain)` : ''}, newest first.`,
  );
  fill('motions-pager', pager('motions', page.motionsPage, all.length, MOTION_PAGE_ROWS));
  const seen = new Map<string, number>();
  fill(
    'motions-body',
    ...rows.map((m) => {
      const base = `${m.sid}|${m.source}|${m.target}|${m.requestedAt ?? '-'}`;
      const n = seen.get(base) ?? 0;
      seen.set(base, n + 1);
      return el(
        'tr',
        { class: `result-${m.result} via-${m.via}`, 'data-sid': m.sid, 'data-key': `${base}|${n}` },
        el('td', {}, `${m.kind} ${m.sid}`),
        el('td', {}, `${m.source} → ${m.target}`),
        el('td', {}, el('span', { class: `chip via-${m.via}` }, VIA_WORDS[m.via] ?? m.via)),
        el('td', { class: 'time' }, m.requestedAtText ?? '–'),
        el('td', { class: 'num' }, duration(m.durationSeconds)),
        el('td', {}, el('span', { class: `chip result-${m.result}` }, m.result)),
        el('td', { class: 'message' }, m.reason ?? ''),
      );
    }),
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

function planStep(step: PlanDoc['steps'][number], i: number): HTMLElement {
  return el(
    'li',
    { 'data-key': i },
    ...step.map((m) =>
      el(
        'div',
        {},
        `${m.guests.join(' + ')} ${m.source} → ${m.target} (${gib(m.bytes)})${m.kind === 'move' ? '' : ` [${m.kind}]`}`,
      ),
    ),
  );
}

/** `vm:1, vm:2, vm:3, vm:4 and 12 more`. */
function someNames(names: readonly string[]): string {
  const shown = names.slice(0, WHATIF_NAMES).join(', ');
  return names.length > WHATIF_NAMES ? `${shown} and ${names.length - WHATIF_NAMES} more` : shown;
}

function renderPlan(): void {
  const p = page.plan;
  if (p === undefined) {
    fill('plan-body', 'computing…');
  } else if ('error' in p) {
    fill('plan-body', el('p', { class: 'muted' }, p.error));
  } else {
    const open = p.steps.slice(0, PLAN_STEPS_OPEN);
    const more = p.steps.slice(PLAN_STEPS_OPEN, MAX_PLAN_STEPS);
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
            el('ol', { id: 'plan-steps' }, ...open.map(planStep)),
            more.length > 0
              ? el(
                  'details',
                  { id: 'plan-more' },
                  el('summary', {}, `steps ${PLAN_STEPS_OPEN + 1}–${PLAN_STEPS_OPEN + more.length}`),
                  el(
                    'ol',
                    { start: PLAN_STEPS_OPEN + 1, class: 'bounded' },
                    ...more.map((s, i) => planStep(s, PLAN_STEPS_OPEN + i)),
                  ),
                )
              : null,
            p.steps.length > MAX_PLAN_STEPS
              ? el(
                  'p',
                  { class: 'muted' },
                  `… and ${p.steps.length - MAX_PLAN_STEPS} more steps (api/plan lists them all)`,
                )
              : null,
          )
        : el('p', { id: 'plan-summary', class: 'banner warn' }, `infeasible: ${(p.reasons ?? []).join('; ')}`),
    );
  }
  const w = page.whatIf;
  if (w === undefined) fill('whatif-body', 'computing…');
  else if ('error' in w) fill('whatif-body', el('p', { class: 'muted' }, w.error));
  else {
    const cases = [...w.cases].sort((a, b) => naturalCompare(a.node, b.node));
    const failing = cases.filter((c) => !c.recovered).length;
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
          : ` The guests of ${failing} of ${cases.length} nodes would not all be recovered.`,
      ),
      el(
        'div',
        { class: 'scroll bounded' },
        el(
          'table',
          { id: 'whatif' },
          el(
            'thead',
            {},
            el(
              'tr',
              {},
              el('th', {}, 'node fails'),
              el('th', {}, 'HA recovers'),
              el('th', {}, 'after'),
              el('th', {}, 'not recovered'),
            ),
          ),
          el(
            'tbody',
            {},
            ...cases.map((c) =>
              el(
                'tr',
                { 'data-key': c.node, class: c.recovered ? '' : 'unrecovered' },
                el('td', {}, el('strong', {}, c.node)),
                el(
                  'td',
                  {},
                  el('span', { class: `chip ${c.recovered ? 'ok' : 'bad'}` }, c.recovered ? 'all' : 'not all'),
                  ` ${c.recover.length} HA resources`,
                ),
                el('td', {}, c.after ? `CPU ${pct(c.after.cpu)}, memory ${pct(c.after.mem)}` : '–'),
                el(
                  'td',
                  { class: 'message' },
                  c.unrecovered.length > 0 ? someNames(c.unrecovered.map((u) => `${u.id} (${u.reason})`)) : '',
                  c.lost.length > 0 ? `${c.unrecovered.length > 0 ? '; ' : ''}lost (not HA): ${someNames(c.lost)}` : '',
                ),
              ),
            ),
          ),
        ),
      ),
    );
  }
}

let planLoading = false;

/** Filling in the older rounds: its run (bumped to abandon it), whether one runs, whether it is done. */
const backfill = { run: 0, busy: false, done: false };

/** Asks for the rounds before the first held, a piece at a time, until the daemon has none older or the page is full. */
async function fillInHistory(): Promise<void> {
  const run = ++backfill.run;
  backfill.busy = true;
  try {
    while (run === backfill.run && !page.history.full) {
      const first = page.history.firstRound;
      if (first === undefined || first <= 1) break;
      const doc = await getJson<HistoryDoc>(`api/history?pressure=0&before=${first}&limit=${HISTORY_PIECE_ROUNDS}`);
      if (run !== backfill.run) return;
      if (doc.rounds.length === 0 || page.history.prepend(doc) === 0) break;
      void scheduleCharts();
    }
    if (run === backfill.run) backfill.done = true;
  } catch {
    // the next poll starts it again
  } finally {
    if (run === backfill.run) backfill.busy = false;
  }
  if (run === backfill.run) void scheduleCharts();
}

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

/** One poll: asks for what is new, keeps it, and says which parts changed. */
async function poll(): Promise<Set<Part>> {
  const changed = new Set<Part>();
  const h = page.history;
  const lastRound = page.decisions.at(-1)?.round;
  // the first history asked for is the default window's (the interval says how many rounds);
  // older rounds are filled in afterwards, in pieces (`backfill`)
  if (page.run === undefined) {
    try {
      page.run = await getVersioned<RunDoc>('api/run');
      changed.add('run');
    } catch {
      // said by the poll below
    }
  }
  const firstRounds = Math.min(
    HISTORY_MAX_ROUNDS,
    Math.ceil(page.windowSeconds / (page.run?.intervalSeconds ?? 10)) + 1,
  );
  const results = await Promise.allSettled([
    getText('status'),
    getVersioned<RunDoc>('api/run'),
    getVersioned<ClusterDoc>('api/cluster'),
    getJson<HistoryDoc>(
      h.lastRound === undefined
        ? `api/history?pressure=0&limit=${firstRounds}`
        : `api/history?after=${h.lastRound}&pressure=0`,
    ),
    getJson<{ decisions: Decision[] }>(
      lastRound === undefined ? 'api/decisions?limit=5000' : `api/decisions?after=${lastRound}&limit=5000`,
    ),
    getVersioned<{ motions: Motion[] }>('api/motions'),
    getVersioned<DrainDoc>('api/drain'),
    page.policy === undefined ? getJson<PolicyDoc>('api/policy') : Promise.resolve(undefined),
  ]);
  const [status, run, cluster, history, decisions, motions, drain, policy] = results;
  const failed = results.find((r) => r.status === 'rejected');
  const wasSilent = page.silentSince !== undefined;
  let restarted = false;
  if (failed) {
    page.silentSince ??= new Date();
    page.silentWhy = String((failed.reason as Error)?.message ?? failed.reason);
    page.failures++;
    changed.add('liveness');
  } else {
    page.silentSince = undefined;
    page.lastAnswer = new Date();
    page.failures = 0;
    if (wasSilent) changed.add('liveness');
  }
  if (status.status === 'fulfilled' && status.value !== page.statusText) {
    const before = page.status;
    page.statusText = status.value;
    page.status = JSON.parse(status.value) as Status;
    changed.add('status');
    // a new daemon run (its rounds restarted): start the history and the log afresh
    if (before && page.status.rounds < before.rounds) {
      page.history.clear();
      backfill.run++;
      backfill.done = false;
      page.decisions = [];
      changed.add('history').add('decisions');
      // this poll's rounds came after the old run's last: the next poll asks for all of them
      restarted = true;
    }
  }
  if (run.status === 'fulfilled' && run.value) {
    page.run = run.value;
    changed.add('run');
  }
  if (cluster.status === 'fulfilled' && cluster.value) {
    page.cluster = cluster.value;
    changed.add('cluster');
  }
  if (history.status === 'fulfilled' && !restarted && page.history.append(history.value) > 0) changed.add('history');
  if (decisions.status === 'fulfilled' && !restarted && decisions.value.decisions.length > 0) {
    page.decisions = [...page.decisions, ...decisions.value.decisions].slice(-MAX_DECISIONS);
    changed.add('decisions');
  }
  if (motions.status === 'fulfilled' && motions.value) {
    page.motions = motions.value.motions;
    changed.add('motions');
  }
  if (drain.status === 'fulfilled' && drain.value) {
    page.drain = drain.value;
    changed.add('drain');
  }
  if (policy.status === 'fulfilled' && policy.value) {
    page.policy = policy.value;
    changed.add('policy');
  }
  return changed;
}

/** Draws the parts that changed (all of them on the first poll). */
function render(changed: ReadonlySet<Part>): void {
  const any = (...parts: Part[]) => parts.some((p) => changed.has(p));
  if (any('status', 'run', 'liveness')) renderHeader();
  if (any('status', 'run', 'liveness', 'cluster', 'drain')) renderBanners();
  if (any('status', 'cluster', 'drain')) renderNodes();
  if (any('status')) renderMotion();
  if (any('decisions')) renderDecisions();
  if (any('motions')) renderMotions();
  if (any('policy')) renderPolicy();
  if (any('cluster') && page.plan !== undefined && !('error' in page.plan)) renderPlan();
  document.body.dataset.round = String(page.status?.rounds ?? 0);
  if (any('history', 'motions')) void scheduleCharts();
}

/** The wait before the next poll: every 2 s; slower while the daemon does not answer (up to 30 s) and once the run ended. */
function nextPollMs(): number {
  if (page.failures > 0) return Math.min(SLOW_POLL_MS, POLL_MS * 2 ** (page.failures - 1));
  return ended() ? SLOW_POLL_MS : POLL_MS;
}

let first = true;
let polls = 0;

async function loop(): Promise<void> {
  const wasEnded = ended() !== null;
  try {
    const changed = await poll();
    render(
      first
        ? new Set<Part>(['status', 'run', 'cluster', 'history', 'decisions', 'motions', 'drain', 'policy', 'liveness'])
        : changed,
    );
    if (first) {
      first = false;
      await scheduleCharts();
      document.body.dataset.ready = 'true';
      // when, after the navigation began (ms): the page benchmark reads it
      document.body.dataset.readyMs = String(Math.round(performance.now()));
    }
    if (!backfill.busy && !backfill.done && page.history.length > 0) void fillInHistory();
    // the plan is computed once the daemon has read the cluster (after the page is drawn: it
    // may take the daemon a while), then when asked again
    const noPlanYet =
      page.plan !== undefined && 'error' in page.plan && page.plan.error.startsWith('no round has read');
    if (page.cluster?.read && (page.plan === undefined || noPlanYet) && !planLoading) void loadPlan();
  } catch (err) {
    page.silentSince ??= new Date();
    page.silentWhy = String(err);
    page.failures++;
    render(new Set<Part>(['liveness']));
  }
  // for a reader (and the browser test): polls done, and the wait before the next
  polls++;
  document.body.dataset.polls = String(polls);
  document.body.dataset.polling = String(nextPollMs());
  // the poll that first saw the end may have raced the last round: one more at the usual pace
  setTimeout(() => void loop(), ended() !== null && !wasEnded ? POLL_MS : nextPollMs());
}

function start(): void {
  const decisionsAnew = () => {
    page.decisionsPage = 0;
    renderDecisions();
  };
  for (const id of ['filter-outcome', 'filter-text', 'filter-changes'])
    document.getElementById(id)?.addEventListener('input', decisionsAnew);
  document.addEventListener('click', (e) => {
    const target = (e.target as Element | null)?.closest<HTMLButtonElement>('button[data-page]');
    if (!target) return;
    const [which, where] = (target.dataset.page ?? '').split(':');
    const key = which === 'motions' ? 'motionsPage' : 'decisionsPage';
    page[key] = where === 'newest' ? 0 : where === 'newer' ? Math.max(0, page[key] - 1) : page[key] + 1;
    if (which === 'motions') renderMotions();
    else renderDecisions();
  });
  for (const b of document.querySelectorAll<HTMLButtonElement>('button[data-window]')) {
    b.addEventListener('click', () => {
      page.windowSeconds = Number(b.dataset.window);
      for (const other of document.querySelectorAll('button[data-window]')) other.classList.toggle('on', other === b);
      void scheduleCharts();
    });
  }
  document.getElementById('plan-refresh')?.addEventListener('click', () => void loadPlan());
  let resizeTimer: number | undefined;
  window.addEventListener('resize', () => {
    window.clearTimeout(resizeTimer);
    resizeTimer = window.setTimeout(() => void scheduleCharts(), 200);
  });
  void loop();
}

start();
