/**
 * The status page's charts as Vega-Lite specs: pure functions of the width and the data, no
 * DOM (the page renders them with Vega in the browser; a test renders them headless). Times
 * are the daemon's clock in seconds, shown in UTC (as the log writes them).
 */
import type { TopLevelSpec } from 'vega-lite';

/** Up to this many nodes the load chart has a line per node; above, a heatmap. */
const MAX_NODE_LINES = 12;

/** Colours of a motion's outcome, as the page's tables show them. */
const MOTION_COLOURS = {
  domain: ['succeeded', 'failed', 'in-flight'],
  range: ['#2e7d32', '#c62828', '#ef6c00'],
} as const;

const FONT = 'system-ui, -apple-system, "Segoe UI", Roboto, "DejaVu Sans", sans-serif';

const CONFIG = {
  font: FONT,
  axis: { labelFontSize: 11, titleFontSize: 11, titleFontWeight: 'normal' as const, gridColor: '#e6e6e6' },
  legend: { labelFontSize: 11, titleFontSize: 11, orient: 'bottom' as const, columns: 6, symbolType: 'stroke' },
  view: { stroke: null },
  title: {
    fontSize: 13,
    anchor: 'start' as const,
    fontWeight: 600 as const,
    subtitleFontSize: 11,
    subtitleColor: '#555',
  },
};

/** A row of the imbalance chart. */
export interface ImbalanceRow {
  /** Milliseconds since the epoch (the daemon's clock). */
  readonly t: number;
  /** Percent; null where the round read nothing. */
  readonly imbalance: number | null;
}

/** A motion marker. */
export interface MotionRow {
  readonly t: number;
  readonly label: string;
  readonly result: string;
}

/** A row of the node load chart. */
export interface LoadRow {
  readonly t: number;
  readonly node: string;
  /** `CPU` or `memory`. */
  readonly resource: string;
  /** Percent of the node's capacity; null where not read. */
  readonly load: number | null;
}

/** The time axis of every chart: UTC clock times. */
const timeAxis = (title: string | null, width: number, spanSeconds: number) => ({
  field: 't',
  type: 'temporal' as const,
  scale: { type: 'utc' as const },
  // a label every ~90 px at most, with seconds when the ticks are less than a minute apart
  axis: {
    title,
    labelOverlap: true,
    tickCount: Math.max(2, Math.floor(width / 90)),
    format: spanSeconds / Math.max(2, Math.floor(width / 90)) < 60 ? '%H:%M:%S' : '%H:%M',
  },
});

/**
 * The normalised imbalance per round (percent) with the threshold as a dashed rule and each
 * motion as a mark at its request (colour: its outcome). Datasets: `series`, `motions`.
 * `spanSeconds`: the time the chart spans (the axis labels show seconds when it is short).
 */
export function imbalanceSpec(width: number, thresholdPercent: number, spanSeconds: number): TopLevelSpec {
  return {
    $schema: 'https://vega.github.io/schema/vega-lite/v6.json',
    width,
    height: 180,
    autosize: { type: 'fit-x', contains: 'padding' },
    config: CONFIG,
    title: { text: 'Imbalance', subtitle: `normalised, per round; dashed: the threshold (${thresholdPercent}%)` },
    layer: [
      {
        data: { name: 'series' },
        mark: { type: 'line', interpolate: 'step-after', strokeWidth: 1.6, color: '#1f5f99' },
        encoding: {
          x: timeAxis(null, width, spanSeconds),
          y: {
            field: 'imbalance',
            type: 'quantitative',
            title: 'imbalance (%)',
            scale: { domain: [0, 100], clamp: true },
          },
          tooltip: [
            { field: 't', type: 'temporal', title: 'time (UTC)', format: '%H:%M:%S', formatType: 'utc' },
            { field: 'imbalance', type: 'quantitative', title: 'imbalance %', format: '.1f' },
          ],
        },
      },
      {
        data: { values: [{ threshold: thresholdPercent }] },
        mark: { type: 'rule', strokeDash: [5, 4], color: '#888' },
        encoding: { y: { field: 'threshold', type: 'quantitative' } },
      },
      {
        data: { name: 'motions' },
        mark: { type: 'point', shape: 'triangle-down', filled: true, size: 90, opacity: 0.95 },
        encoding: {
          x: { field: 't', type: 'temporal', scale: { type: 'utc' } },
          y: { datum: 97 },
          color: {
            field: 'result',
            type: 'nominal',
            scale: { domain: [...MOTION_COLOURS.domain], range: [...MOTION_COLOURS.range] },
            legend: { title: 'motions', symbolType: 'triangle-down' },
          },
          tooltip: [
            { field: 'label', type: 'nominal', title: 'motion' },
            { field: 'result', type: 'nominal', title: 'outcome' },
          ],
        },
      },
    ],
    resolve: { scale: { y: 'shared' } },
  };
}

/**
 * One resource's node load (percent of capacity) per round: a line per node, or above
 * {@link MAX_NODE_LINES} nodes a heatmap of nodes × time. Dataset: `load` (rows of every
 * resource; the chart keeps its own).
 */
export function loadSpec(
  width: number,
  nodes: readonly string[],
  resource: 'CPU' | 'memory',
  spanSeconds: number,
): TopLevelSpec {
  const tooltip = [
    { field: 'node', type: 'nominal' as const },
    { field: 't', type: 'temporal' as const, title: 'time (UTC)', format: '%H:%M:%S', formatType: 'utc' },
    { field: 'load', type: 'quantitative' as const, title: 'load %', format: '.1f' },
  ];
  const common = {
    $schema: 'https://vega.github.io/schema/vega-lite/v6.json',
    config: CONFIG,
    width,
    autosize: { type: 'fit-x' as const, contains: 'padding' as const },
    data: { name: 'load' },
    title: { text: `Node ${resource}`, subtitle: 'measured use, percent of the node\u2019s capacity' },
    transform: [{ filter: { field: 'resource', equal: resource } }],
  };
  if (nodes.length > MAX_NODE_LINES) {
    return {
      ...common,
      height: Math.min(600, Math.max(120, nodes.length * 8)),
      mark: { type: 'rect' },
      encoding: {
        x: { ...timeAxis(null, width, spanSeconds), timeUnit: { unit: 'utcyearmonthdatehoursminutes', step: 5 } },
        y: { field: 'node', type: 'nominal', sort: [...nodes], axis: { title: null, labelLimit: 90 } },
        color: {
          aggregate: 'mean',
          field: 'load',
          type: 'quantitative',
          title: 'load %',
          scale: { domain: [0, 100], scheme: 'yelloworangered', clamp: true },
        },
        tooltip,
      },
    };
  }
  return {
    ...common,
    height: 170,
    mark: { type: 'line', interpolate: 'step-after', strokeWidth: 1.5 },
    encoding: {
      x: timeAxis(null, width, spanSeconds),
      y: { field: 'load', type: 'quantitative', title: 'load (%)', scale: { domain: [0, 100], clamp: true } },
      color: {
        field: 'node',
        type: 'nominal',
        sort: [...nodes],
        scale: { scheme: 'tableau10' },
        legend: { title: null },
      },
      tooltip,
    },
  };
}

/** The history's columns as chart rows (times in ms, ratios in percent). */
export function historyRows(history: {
  readonly time: readonly number[];
  readonly imbalance: readonly (number | null)[];
  readonly nodes: Readonly<
    Record<string, { readonly cpu: readonly (number | null)[]; readonly mem: readonly (number | null)[] }>
  >;
}): { imbalance: ImbalanceRow[]; load: LoadRow[] } {
  const pct = (x: number | null | undefined) => (x === null || x === undefined ? null : Math.round(x * 10000) / 100);
  const imbalance = history.time.map((t, i) => ({ t: t * 1000, imbalance: pct(history.imbalance[i]) }));
  const load: LoadRow[] = [];
  for (const [node, series] of Object.entries(history.nodes)) {
    history.time.forEach((t, i) => {
      load.push({ t: t * 1000, node, resource: 'CPU', load: pct(series.cpu[i]) });
      load.push({ t: t * 1000, node, resource: 'memory', load: pct(series.mem[i]) });
    });
  }
  return { imbalance, load };
}
