/**
 * The node load heatmap of a large cluster, drawn on a canvas (a day of 64 nodes in SVG rects
 * would be tens of thousands of DOM nodes): a row of 12 px per node in natural order with its
 * name beside it, a cell per time slice coloured by the highest load seen in it (a spike of one
 * round stays visible), the mean and the highest in a tooltip.
 */
import { el } from './dom';

/** Row height (CSS px): a 10 px label per row, no overlap. */
const HEAT_ROW_PX = 12;
/** Width of a cell at least (CSS px): the slices of a chart are its plot width over this. */
const HEAT_CELL_PX = 4;
const LABEL_PX = 84;
const AXIS_PX = 22;
const FONT = '10px system-ui, -apple-system, "Segoe UI", Roboto, "DejaVu Sans", sans-serif';

/** Colour stops of the load (0..1), yellow to dark red (ColorBrewer YlOrRd). */
const STOPS: readonly (readonly [number, number, number])[] = [
  [255, 255, 204],
  [254, 217, 118],
  [253, 141, 60],
  [227, 26, 28],
  [128, 0, 38],
];
const NO_VALUE = '#eef1f4';
/** Steps of the time axis (seconds), the shortest that leaves ~70 px between labels. */
const TICK_STEPS_SECONDS = [10, 30, 60, 300, 600, 900, 1800, 3600, 7200, 10_800, 21_600, 43_200, 86_400];

/** The colour of a load ratio (clamped to 0..1); `NO_VALUE` for none. */
function loadColour(ratio: number): string {
  if (Number.isNaN(ratio)) return NO_VALUE;
  const x = Math.max(0, Math.min(1, ratio)) * (STOPS.length - 1);
  const k = Math.min(STOPS.length - 2, Math.floor(x));
  const f = x - k;
  const [a, b] = [STOPS[k]!, STOPS[k + 1]!];
  const mix = (i: number) => Math.round(a[i]! + (b[i]! - a[i]!) * f);
  return `rgb(${mix(0)},${mix(1)},${mix(2)})`;
}

/** What a heatmap shows: nodes (in order) × slices of `from`..`to` seconds. */
export interface HeatmapData {
  readonly title: string;
  readonly subtitle: string;
  readonly nodes: readonly string[];
  readonly from: number;
  readonly to: number;
  readonly buckets: number;
  /** Per node, per slice: the highest and the mean load (ratios; NaN: none). */
  readonly max: readonly Float32Array[];
  readonly mean: readonly Float32Array[];
  /** Clock text of a time (seconds) on an axis of ticks `stepSeconds` apart: `14:05`, `14:05:30`. */
  readonly timeText: (seconds: number, stepSeconds: number) => string;
}

/** The slices a heatmap of this width holds. */
export function heatmapBuckets(width: number): number {
  return Math.max(1, Math.floor((width - LABEL_PX) / HEAT_CELL_PX));
}

/** Draws (or redraws) the heatmap into the figure, which keeps its canvas between draws. */
export function drawHeatmap(figure: HTMLElement, width: number, data: HeatmapData): void {
  let canvas = figure.querySelector('canvas');
  let tip = figure.querySelector<HTMLElement>('.heat-tip');
  if (canvas === null || tip === null) {
    figure.replaceChildren(
      el('div', { class: 'chart-title' }, data.title),
      el('div', { class: 'chart-subtitle' }, data.subtitle),
      el('div', { class: 'heat-wrap' }, el('canvas', { role: 'img' }), el('div', { class: 'heat-tip', hidden: true })),
      legend(),
    );
    canvas = figure.querySelector('canvas')!;
    tip = figure.querySelector<HTMLElement>('.heat-tip')!;
    const c = canvas;
    const t = tip;
    c.addEventListener('mousemove', (e) => hover(c, t, e));
    c.addEventListener('mouseleave', () => (t.hidden = true));
  }
  const height = data.nodes.length * HEAT_ROW_PX + AXIS_PX;
  const ratio = window.devicePixelRatio || 1;
  canvas.width = Math.round(width * ratio);
  canvas.height = Math.round(height * ratio);
  canvas.style.width = `${width}px`;
  canvas.style.height = `${height}px`;
  canvas.setAttribute('aria-label', `${data.title}: ${data.nodes.length} nodes`);
  const ctx = canvas.getContext('2d');
  if (ctx === null) return;
  ctx.setTransform(ratio, 0, 0, ratio, 0, 0);
  ctx.clearRect(0, 0, width, height);
  const plot = width - LABEL_PX;
  const cell = plot / data.buckets;
  ctx.font = FONT;
  ctx.textBaseline = 'middle';
  data.nodes.forEach((node, row) => {
    const y = row * HEAT_ROW_PX;
    ctx.fillStyle = '#1d2329';
    ctx.textAlign = 'right';
    ctx.fillText(fitText(ctx, node, LABEL_PX - 8), LABEL_PX - 6, y + HEAT_ROW_PX / 2);
    const max = data.max[row]!;
    for (let b = 0; b < data.buckets; b++) {
      ctx.fillStyle = loadColour(max[b]!);
      // cells overlap by a fraction of a pixel: no seams between them
      ctx.fillRect(LABEL_PX + b * cell, y, cell + 0.5, HEAT_ROW_PX - 1);
    }
  });
  // the time axis: round clock times, at least ~70 px apart
  const span = data.to - data.from;
  const step = TICK_STEPS_SECONDS.find((s) => span <= 0 || (plot * s) / span >= 70) ?? TICK_STEPS_SECONDS.at(-1)!;
  ctx.fillStyle = '#5f6b76';
  const axisY = data.nodes.length * HEAT_ROW_PX + AXIS_PX / 2;
  for (let t = Math.ceil(data.from / step) * step; t <= data.to; t += step) {
    const x = LABEL_PX + (span > 0 ? ((t - data.from) / span) * plot : 0);
    const text = data.timeText(t, step);
    const half = ctx.measureText(text).width / 2;
    if (x - half < LABEL_PX || x + half > width) continue;
    ctx.fillStyle = '#c5ccd3';
    ctx.fillRect(x, data.nodes.length * HEAT_ROW_PX, 1, 4);
    ctx.fillStyle = '#5f6b76';
    ctx.textAlign = 'center';
    ctx.fillText(text, x, axisY);
  }
  (canvas as HTMLCanvasElement & { heat?: HeatmapData & { width: number } }).heat = { ...data, width };
}

function fitText(ctx: CanvasRenderingContext2D, text: string, px: number): string {
  if (ctx.measureText(text).width <= px) return text;
  let s = text;
  while (s.length > 1 && ctx.measureText(`${s}…`).width > px) s = s.slice(0, -1);
  return `${s}…`;
}

function hover(canvas: HTMLCanvasElement, tip: HTMLElement, e: MouseEvent): void {
  const data = (canvas as HTMLCanvasElement & { heat?: HeatmapData & { width: number } }).heat;
  if (data === undefined) return;
  const box = canvas.getBoundingClientRect();
  const x = e.clientX - box.left;
  const y = e.clientY - box.top;
  const row = Math.floor(y / HEAT_ROW_PX);
  const plot = data.width - LABEL_PX;
  const b = Math.floor(((x - LABEL_PX) / plot) * data.buckets);
  if (row < 0 || row >= data.nodes.length || b < 0 || b >= data.buckets) {
    tip.hidden = true;
    return;
  }
  const span = data.to - data.from;
  const t0 = data.from + (span * b) / data.buckets;
  const t1 = data.from + (span * (b + 1)) / data.buckets;
  const max = data.max[row]![b]!;
  const mean = data.mean[row]![b]!;
  const slice = span / data.buckets;
  tip.textContent = `${data.nodes[row]} ${data.timeText(t0, slice)}–${data.timeText(t1, slice)}: ${
    Number.isNaN(max) ? 'not read' : `highest ${(max * 100).toFixed(1)} %, mean ${(mean * 100).toFixed(1)} %`
  }`;
  tip.hidden = false;
  tip.style.left = `${Math.min(x + 12, data.width - 220)}px`;
  tip.style.top = `${y + 14}px`;
}

function legend(): HTMLElement {
  const stops = [0, 0.25, 0.5, 0.75, 1].map((r) => `${loadColour(r)} ${r * 100}%`).join(', ');
  return el(
    'div',
    { class: 'heat-legend' },
    el('span', {}, '0 %'),
    el('span', { class: 'heat-scale', style: `background: linear-gradient(to right, ${stops})` }),
    el('span', {}, '100 %'),
    el('span', { class: 'muted' }, ' grey: not read'),
  );
}
