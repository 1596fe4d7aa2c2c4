/**
 * The status page's charts as Vega-Lite specs: pure functions of the width and the data, no
 * DOM (the page renders them with Vega in the browser; a test renders them headless). Times
 * are the daemon's clock in seconds, shown in UTC (as the log writes them).
 */
import type { TopLevelSpec } from 'vega-lite';

/** Up to this many nodes the load chart has a line per node; above, a heatmap. */
export const MAX_NODE_LINES = 12;

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

/** A motion marker. */
export interface MotionRow {
  readonly t: number;
  readonly label: string;
  readonly result: string;
  /** Who asked: `ha` or `guest` (the daemon's own), `drain` (a drain's). */
  readonly via: string;
}

/** The marker of a motion by who asked: the daemon's a triangle, a drain's a square. */
const MOTION_SHAPES = {
  domain: ['ha', 'guest', 'drain'],
  range: ['triangle-down', 'triangle-down', 'square'],
} as const;

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
 * motion as a mark at its request (colour: its outcome; a square for a drain's). Datasets:
 * `series` (down-sampled by the page: each slice's lowest and highest value), `motions`.
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
          shape: {
            field: 'via',
            type: 'nominal',
            scale: { domain: [...MOTION_SHAPES.domain], range: [...MOTION_SHAPES.range] },
            legend: null,
          },
          tooltip: [
            { field: 'label', type: 'nominal', title: 'motion' },
            { field: 'via', type: 'nominal', title: 'asked by' },
            { field: 'result', type: 'nominal', title: 'outcome' },
          ],
        },
      },
    ],
    resolve: { scale: { y: 'shared' } },
  };
}

/**
 * One resource's node load (percent of capacity), a line per node (up to
 * {@link MAX_NODE_LINES} nodes; above, the page draws a heatmap: `heatmap.ts`). Dataset: `load`
 * (rows of this resource, down-sampled by the page: each slice's lowest and highest value).
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
  return {
    $schema: 'https://vega.github.io/schema/vega-lite/v6.json',
    config: CONFIG,
    width,
    autosize: { type: 'fit-x' as const, contains: 'padding' as const },
    data: { name: 'load' },
    title: { text: `Node ${resource}`, subtitle: 'measured use, percent of the node\u2019s capacity' },
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
