import * as vega from 'vega';
import { compile, type TopLevelSpec } from 'vega-lite';
import { binMeans, binWidth, rebin, type Bins } from './series';
import type { RunDigest } from './digest';
import type { PredictionPoint } from './prediction';

/** Bins per chart line (the report's time resolution). */
export const CHART_MAX_BINS = 200;
/** Cells per heatmap panel (nodes × bins), to keep the file small. */
export const HEATMAP_MAX_CELLS = 3000;
/** Up to this many nodes a load chart has one line per node; above, a heatmap. */
export const MAX_NODE_LINES = 8;

const WIDTH = 720;
const FONT = 'DejaVu Sans, Helvetica, Arial, sans-serif';

/** Outcome colours and shapes of move markers. */
const OUTCOMES = {
  domain: ['ok', 'failed', 'in flight'],
  range: ['#4c78a8', '#d62728', '#ff7f0e'],
  shapes: ['circle', 'cross', 'triangle-up'],
};

/** The time axis' unit: minutes for runs up to 3 h, hours beyond. */
function timeUnit(horizon: number): { seconds: number; label: string } {
  return horizon <= 3 * 3600
    ? { seconds: 60, label: 'simulated time (min)' }
    : { seconds: 3600, label: 'simulated time (h)' };
}

/**
 * Renders a Vega-Lite spec to an SVG string with Vega's headless renderer (no DOM, no network).
 * Vega numbers gradients and clip paths with process-wide counters; they are renamed
 * `<idPrefix>-1`, `-2`, ... in order of definition, so that the SVG depends only on the spec
 * and several SVGs can share one page.
 */
export async function renderSvg(spec: TopLevelSpec, idPrefix = 'chart'): Promise<string> {
  const vgSpec = compile(spec).spec;
  const view = new vega.View(vega.parse(vgSpec), { renderer: 'none' });
  try {
    return renameIds(await view.toSVG(), idPrefix);
  } finally {
    view.finalize();
  }
}

/** Renames every `id="…"` of an SVG and its `url(#…)` / `href="#…"` references. */
function renameIds(svg: string, prefix: string): string {
  const ids = new Map<string, string>();
  for (const m of svg.matchAll(/\sid="([^"]+)"/g)) if (!ids.has(m[1]!)) ids.set(m[1]!, `${prefix}-${ids.size + 1}`);
  if (ids.size === 0) return svg;
  const ren = (id: string) => ids.get(id) ?? id;
  return svg
    .replace(/(\sid=")([^"]+)(")/g, (_, a: string, id: string, b: string) => a + ren(id) + b)
    .replace(/url\(#([^)]+)\)/g, (_, id: string) => `url(#${ren(id)})`)
    .replace(/(href=")#([^"]+)(")/g, (_, a: string, id: string, b: string) => `${a}#${ren(id)}${b}`);
}

const baseConfig = {
  font: FONT,
  title: { fontSize: 14, anchor: 'start' as const, subtitleFontSize: 11, subtitleColor: '#555' },
  axis: { labelFontSize: 11, titleFontSize: 12, titleFontWeight: 'normal' as const },
  legend: {
    labelFontSize: 11,
    titleFontSize: 12,
    titleFontWeight: 'normal' as const,
    orient: 'right' as const,
    titleLimit: 260,
  },
  view: { stroke: '#ccc' },
};

function merged(bins: Bins, width: number): (number | null)[] {
  return binMeans(rebin(bins, width));
}

/** The report's bin width for a scenario: ≤ CHART_MAX_BINS bins, a multiple of every run's stored width. */
function scenarioBinWidth(digests: readonly RunDigest[]): number {
  const horizon = Math.max(0, ...digests.map((d) => d.endTime));
  const stored = Math.max(0, ...digests.map((d) => d.imbalance.width));
  return binWidth(horizon, CHART_MAX_BINS, stored);
}

/** What a chart over time shows of each run: its binned series, the scale to display and the axis title. */
interface RunSeries {
  pick: (d: RunDigest) => Bins | undefined;
  scale: number;
  yTitle: string;
}

/**
 * A series over time per variant: the mean across seeds of each bin's time-weighted value (a
 * line) and the range across seeds (a band). One line per variant; runs without the series
 * are left out.
 */
function variantSeriesSpec(
  digests: readonly RunDigest[],
  variants: readonly string[],
  title: string,
  series: RunSeries,
): TopLevelSpec {
  const width = scenarioBinWidth(digests);
  const horizon = Math.max(0, ...digests.map((d) => d.endTime));
  const unit = timeUnit(horizon);
  const values: { variant: string; t: number; mean: number; lo: number; hi: number }[] = [];
  let seedCount = 0;
  for (const v of variants) {
    const runs = digests
      .filter((d) => d.variant === v)
      .map(series.pick)
      .filter((b): b is Bins => b !== undefined)
      .map((b) => merged(b, width));
    seedCount = Math.max(seedCount, runs.length);
    const n = Math.max(0, ...runs.map((r) => r.length));
    for (let k = 0; k < n; k++) {
      const xs = runs.map((r) => r[k]).filter((x): x is number => x !== null && x !== undefined);
      if (xs.length === 0) continue;
      let sum = 0;
      for (const x of xs) sum += x;
      values.push({
        variant: v,
        t: ((k + 0.5) * width) / unit.seconds,
        mean: (sum / xs.length) * series.scale,
        lo: Math.min(...xs) * series.scale,
        hi: Math.max(...xs) * series.scale,
      });
    }
  }
  const color = { field: 'variant', type: 'nominal' as const, scale: { domain: [...variants] }, title: 'variant' };
  const x = {
    field: 't',
    type: 'quantitative' as const,
    title: unit.label,
    scale: { domain: [0, horizon / unit.seconds], nice: false },
  };
  return {
    $schema: 'https://vega.github.io/schema/vega-lite/v6.json',
    title: {
      text: title,
      subtitle: `mean across ${seedCount} seed${seedCount === 1 ? '' : 's'} per ${width} s bin; band: lowest to highest seed`,
    },
    width: WIDTH,
    height: 220,
    config: baseConfig,
    data: { values },
    layer: [
      // the band shares the lines' colour scale; only the lines have a legend (legends resolved independently)
      {
        mark: { type: 'area', opacity: 0.18 },
        encoding: {
          x,
          y: { field: 'lo', type: 'quantitative' },
          y2: { field: 'hi' },
          color: { ...color, legend: null },
        },
      },
      {
        mark: { type: 'line', strokeWidth: 2 },
        encoding: {
          x,
          y: { field: 'mean', type: 'quantitative', title: series.yTitle, scale: { domainMin: 0 } },
          color: { ...color, legend: { symbolType: 'stroke', symbolStrokeWidth: 3 } },
        },
      },
    ],
    resolve: { legend: { color: 'independent' } },
  };
}

/**
 * Imbalance over time: per variant, the mean across seeds of each bin's time-weighted
 * imbalance (a line) and the range across seeds (a band). One line per variant.
 */
export function imbalanceSpec(digests: readonly RunDigest[], variants: readonly string[], title: string): TopLevelSpec {
  return variantSeriesSpec(digests, variants, title, {
    pick: (d) => d.imbalance,
    scale: 100,
    yTitle: 'node imbalance (%)',
  });
}

/**
 * Guest contention over time: per variant, the mean across seeds of the guests stalled on
 * average in each bin (guest-seconds of stall per second: cpu wait, memory stall, migration),
 * and the range across seeds. null when no run of the scenario has the load pressure model.
 */
export function contentionSpec(
  digests: readonly RunDigest[],
  variants: readonly string[],
  title: string,
): TopLevelSpec | null {
  if (!digests.some((d) => d.contention)) return null;
  return variantSeriesSpec(digests, variants, title, {
    pick: (d) => d.contention,
    scale: 1,
    yTitle: 'guests stalled (guest·s per s)',
  });
}

/** Every move as a marker: one row per variant and seed; shape and colour by outcome. */
export function movesSpec(digests: readonly RunDigest[], variants: readonly string[], title: string): TopLevelSpec {
  const horizon = Math.max(0, ...digests.map((d) => d.endTime));
  const unit = timeUnit(horizon);
  const rows: string[] = [];
  const values: { run: string; t: number; outcome: string; move: string }[] = [];
  for (const v of variants) {
    for (const d of digests.filter((x) => x.variant === v)) {
      const run = `${v} · seed ${d.seed}`;
      rows.push(run);
      for (const m of d.moves) {
        values.push({
          run,
          t: m.time / unit.seconds,
          outcome: m.ok === true ? 'ok' : m.ok === false ? 'failed' : 'in flight',
          move: `${m.sid} ${m.source} → ${m.target}`,
        });
      }
    }
  }
  const failed = values.filter((v) => v.outcome === 'failed').length;
  return {
    $schema: 'https://vega.github.io/schema/vega-lite/v6.json',
    title: {
      text: title,
      subtitle: `${values.length} move${values.length === 1 ? '' : 's'}${failed > 0 ? ` (${failed} failed: red crosses)` : ''} over all seeds; each mark is one resource moved by the balancer`,
    },
    width: WIDTH,
    height: { step: 14 },
    config: baseConfig,
    data: { values },
    mark: { type: 'point', filled: true, size: 40, opacity: 0.85 },
    encoding: {
      x: {
        field: 't',
        type: 'quantitative',
        title: unit.label,
        scale: { domain: [0, horizon / unit.seconds], nice: false },
      },
      y: { field: 'run', type: 'nominal', title: null, scale: { domain: rows }, axis: { labelLimit: 220 } },
      color: {
        field: 'outcome',
        type: 'nominal',
        scale: { domain: OUTCOMES.domain, range: OUTCOMES.range },
        title: 'outcome',
      },
      shape: {
        field: 'outcome',
        type: 'nominal',
        scale: { domain: OUTCOMES.domain, range: OUTCOMES.shapes },
        title: 'outcome',
      },
      tooltip: [{ field: 'move' }],
    },
  };
}

/**
 * Nodes in the order of the run's node list, by the `order` field of the chart data. Names from
 * input (nodes, variants) appear in a spec only as data values and explicit scale domains,
 * never in a sort list or an expression: Vega reads a string literal such as `"constructor"` in
 * an expression as a signal name.
 */
const BY_NODE_ORDER = { field: 'order', op: 'min' } as const;

/** Which node quantity a chart shows. */
export type NodeQuantity = 'load' | 'pressure';

/**
 * Node load (cpu and memory use, % of capacity) or pressure (PSI "some" avg10, %) of one run,
 * cpu above memory: one line per node up to {@link MAX_NODE_LINES} nodes, a heatmap beyond.
 * A pressure panel that holds one value everywhere is left out and said in `notes` (and the
 * subtitle); `spec` is null when nothing is left to draw or the run has no pressure telemetry.
 * `yMax` (percent) fixes the value scale, so that charts of several variants compare by eye.
 */
/** The highest value a node chart of `digest` draws (percent), for a scale shared by several charts; 0 without data. */
export function nodePeak(digest: RunDigest, quantity: NodeQuantity): number {
  const nodes = digest.nodes;
  if (!nodes) return 0;
  const series =
    quantity === 'load' ? [...nodes.cpu, ...nodes.mem] : [...(nodes.pressureCpu ?? []), ...(nodes.pressureMem ?? [])];
  let peak = 0;
  for (const bins of series) for (const v of binMeans(bins)) if (v !== null && v > peak) peak = v;
  return quantity === 'load' ? peak * 100 : peak;
}

export function nodeSpec(
  digest: RunDigest,
  quantity: NodeQuantity,
  title: string,
  horizon: number,
  chartWidth = WIDTH,
  yMax?: number,
): { spec: TopLevelSpec | null; notes: string[] } {
  const nodes = digest.nodes;
  if (!nodes) return { spec: null, notes: [] };
  const cpu = quantity === 'load' ? nodes.cpu : nodes.pressureCpu;
  const mem = quantity === 'load' ? nodes.mem : nodes.pressureMem;
  if (!cpu && !mem) return { spec: null, notes: [] };
  const unit = timeUnit(horizon);
  const heat = nodes.names.length > MAX_NODE_LINES;
  const width = binWidth(
    horizon,
    heat ? Math.max(1, Math.floor(HEATMAP_MAX_CELLS / nodes.names.length)) : CHART_MAX_BINS,
    digest.imbalance.width,
  );
  const panels: [string, Bins[] | undefined][] = [
    [quantity === 'load' ? 'cpu' : 'cpu pressure', cpu],
    [quantity === 'load' ? 'memory' : 'memory pressure', mem],
  ];
  // `order` is the node's place in `nodes.names`: the charts sort nodes by it, never by a list of
  // names (Vega-Lite turns a sort list into an expression, where a name such as `constructor`
  // or `toString` is read as a signal reference and the view fails to build)
  const values: { node: string; order: number; resource: string; t: number; t0: number; t1: number; value: number }[] =
    [];
  const constant: string[] = [];
  for (const [resource, series] of panels) {
    if (!series) continue;
    const means = series.map((bins) => merged(bins, width));
    // a pressure panel that holds one value on every node all the time says it in the subtitle
    const seen = new Set(means.flat().filter((v): v is number => v !== null));
    if (quantity === 'pressure' && seen.size === 1) {
      constant.push(`${resource} ${[...seen][0]} % on every node throughout`);
      continue;
    }
    means.forEach((bins, i) => {
      bins.forEach((v, k) => {
        if (v === null) return;
        values.push({
          node: nodes.names[i]!,
          order: i,
          resource,
          t: ((k + 0.5) * width) / unit.seconds,
          t0: (k * width) / unit.seconds,
          t1: Math.min((k + 1) * width, horizon) / unit.seconds,
          value: quantity === 'load' ? v * 100 : v,
        });
      });
    });
  }
  if (values.length === 0) return { spec: null, notes: constant };
  const valueTitle = quantity === 'load' ? 'use (% of capacity)' : 'PSI some avg10 (%)';
  const rowOrder = panels.filter(([r, s]) => s && values.some((v) => v.resource === r)).map(([r]) => r);
  const x = {
    type: 'quantitative' as const,
    title: unit.label,
    scale: { domain: [0, horizon / unit.seconds], nice: false },
  };
  const subtitle = [
    heat
      ? `one row per node, ${width} s bins; darker = higher`
      : `one line per node, time-weighted mean per ${width} s bin`,
    ...constant,
  ].join('; ');
  const common = {
    $schema: 'https://vega.github.io/schema/vega-lite/v6.json',
    title: { text: title, subtitle },
    config: {
      ...baseConfig,
      facet: { spacing: 12 },
      header: {
        labelFontSize: 12,
        labelAngle: 0,
        labelAlign: 'left' as const,
        labelAnchor: 'start' as const,
        labelOrient: 'top' as const,
        title: null,
      },
    },
    data: { values },
  };
  if (heat) {
    return {
      notes: constant,
      spec: {
        ...common,
        facet: { row: { field: 'resource', type: 'nominal', sort: rowOrder, title: null } },
        spec: {
          width: chartWidth,
          height: { step: Math.max(4, Math.min(12, Math.floor(240 / nodes.names.length))) },
          mark: { type: 'rect' },
          encoding: {
            x: { field: 't0', ...x },
            x2: { field: 't1' },
            y: {
              field: 'node',
              type: 'nominal',
              title: 'node',
              sort: BY_NODE_ORDER,
              axis: nodes.names.length > 24 ? { labelFontSize: 8 } : {},
            },
            // a fixed 0..100 % scale (wider if the data exceed it), so variants compare by colour
            color: {
              field: 'value',
              type: 'quantitative',
              title: valueTitle,
              scale: { scheme: 'blues', domain: [0, Math.max(100, ...values.map((x) => x.value))] },
            },
          },
        },
        resolve: { scale: { y: 'shared' } },
      },
    };
  }
  return {
    notes: constant,
    spec: {
      ...common,
      facet: { row: { field: 'resource', type: 'nominal', sort: rowOrder, title: null } },
      spec: {
        width: chartWidth,
        height: quantity === 'load' ? 110 : 80,
        mark: { type: 'line', strokeWidth: 1.5 },
        encoding: {
          x: { field: 't', ...x },
          y: {
            field: 'value',
            type: 'quantitative',
            title: valueTitle,
            scale: yMax !== undefined && yMax > 0 ? { domain: [0, yMax], nice: true } : { domainMin: 0 },
          },
          color: { field: 'node', type: 'nominal', title: 'node', sort: BY_NODE_ORDER },
        },
      },
    },
  };
}

/**
 * The contention model's cpu prediction after a move against what the node showed then: one
 * point per node and move (source and target), colour by the node's curve family, a cross where
 * the prediction came from the usage-based prior; the diagonal is a perfect prediction. null
 * without points.
 */
export function predictionSpec(points: readonly PredictionPoint[], title: string): TopLevelSpec | null {
  if (points.length === 0) return null;
  const values = points.map((p) => ({
    family: p.family,
    predicted: p.predicted,
    realised: p.realised,
    basis: p.basis,
    move: `${p.sid} ${p.role} ${p.node} at ${p.time} s`,
  }));
  const axis = (field: string, t: string) => ({
    field,
    type: 'quantitative' as const,
    title: t,
    scale: { domain: [0, 100] },
  });
  return {
    $schema: 'https://vega.github.io/schema/vega-lite/v6.json',
    title: {
      text: title,
      subtitle: 'one point per node of a landed move (source and target); on the diagonal the prediction was exact',
    },
    width: 360,
    height: 360,
    config: baseConfig,
    layer: [
      {
        data: { values: [{ a: 0 }, { a: 100 }] },
        mark: { type: 'line', color: '#999', strokeDash: [4, 3] },
        encoding: { x: { field: 'a', type: 'quantitative' }, y: { field: 'a', type: 'quantitative' } },
      },
      {
        data: { values },
        mark: { type: 'point', filled: true, opacity: 0.7, size: 40 },
        encoding: {
          x: axis('realised', 'realised cpu pressure after the move (%)'),
          y: axis('predicted', 'predicted (%)'),
          color: { field: 'family', type: 'nominal', title: 'cpu curve family' },
          shape: {
            field: 'basis',
            type: 'nominal',
            title: 'prediction from',
            scale: { domain: ['learned', 'usage'], range: ['circle', 'cross'] },
          },
        },
      },
    ],
  };
}
