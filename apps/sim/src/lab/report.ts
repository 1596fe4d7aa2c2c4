import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { balanceSection } from './balance-summary';
import { contentionSpec, imbalanceSpec, movesSpec, nodePeak, nodeSpec, predictionSpec, renderSvg } from './charts';
import type { LabSummary, RunDigest } from './digest';
import { fmt } from './format';
import { METRICS, type MetricDef, type Stats, type Verdict } from './stats';

export { fmt } from './format';

/** Width of a node chart's plot when the variants stand side by side (px). */
const NODE_CHART_WIDTH = 360;

/** What a report shows. `digests` in (scenario, variant, seed) order, as `summary` was made from. */
export interface ReportInput {
  title: string;
  summary: LabSummary;
  digests: readonly RunDigest[];
  /** The command line that made it, shown under the title. */
  command?: string;
  /** What each scenario is (shown under its heading), by scenario name. */
  descriptions?: ReadonlyMap<string, string>;
}

const esc = (s: string) => s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;');

function shown(m: MetricDef, v: number | null | undefined): string {
  if (v === null || v === undefined) return '—';
  const s = fmt(v * m.displayScale);
  return m.displayUnit === '%' ? `${s} %` : s;
}

function verdictCell(v: Verdict | undefined, m: MetricDef, variantCount: number): string {
  if (!v) return '<td class="na">—</td>';
  if (v.next === null) {
    const what = v.note === 'tie' ? `tie (${shown(m, v.bestMean)})` : esc(v.note ?? 'n/a');
    return `<td class="na">${what}</td>`;
  }
  const rel = v.relative === null ? '' : `, ${m.better === 'lower' ? '−' : '+'}${fmt(v.relative * 100)} %`;
  const than = variantCount > 2 ? ` (${esc(v.next)})` : '';
  const detail = `${shown(m, v.bestMean)} vs ${shown(m, v.nextMean)}${than}${rel}`;
  if (v.clear === false) {
    // a lead inside the seed-to-seed noise: said, not claimed
    return `<td class="noise">${v.best.map(esc).join(' and ')}<br><span class="small">${detail}; within noise</span></td>`;
  }
  return `<td>${v.best.map((b) => `<b>${esc(b)}</b>`).join(' and ')}<br><span class="small">${detail}</span></td>`;
}

function statCell(m: MetricDef, s: Stats | null | undefined, reason: string | undefined): string {
  if (!s) return `<td class="na" colspan="3">${esc(reason ?? '—')}</td>`;
  const sd = s.sd === null ? '' : ` ± ${fmt(s.sd * m.displayScale)}`;
  return `<td>${shown(m, s.mean)}${sd}</td><td>${shown(m, s.p50)}</td><td>${shown(m, s.p95)}</td>`;
}

const CSS = `
body { font-family: 'DejaVu Sans', Helvetica, Arial, sans-serif; color: #222; margin: 24px auto; max-width: 1040px; padding: 0 16px; line-height: 1.4; }
h1 { font-size: 22px; margin-bottom: 4px; } h2 { font-size: 18px; margin-top: 40px; border-bottom: 1px solid #ccc; padding-bottom: 4px; }
h3 { font-size: 15px; margin: 24px 0 6px; }
.small { font-size: 12px; color: #555; } .how { background: #f4f6f8; border-left: 4px solid #4c78a8; padding: 8px 12px; font-size: 13px; }
table { border-collapse: collapse; margin: 8px 0 16px; font-size: 13px; } th, td { border: 1px solid #ccc; padding: 4px 8px; text-align: left; vertical-align: top; }
th { background: #f4f6f8; font-weight: 600; } td.na, td.noise { color: #888; }
figure { margin: 12px 0 20px; } figure svg { max-width: 100%; height: auto; }
.variants { display: grid; grid-template-columns: repeat(auto-fit, minmax(480px, 1fr)); gap: 0 16px; }
.variants h4 { font-size: 14px; margin: 8px 0 0; }
.desc { margin: 4px 0 8px; }
code { background: #f4f6f8; padding: 1px 4px; font-size: 12px; }
.note { color: #666; font-style: italic; font-size: 13px; }
`;

/** Builds the self-contained report (inline CSS and SVG; no scripts, fonts or external URLs). */
async function buildReport(input: ReportInput): Promise<string> {
  const { summary: s, digests } = input;
  const variants = s.variants.map((v) => v.name);
  const judged = METRICS.filter((m) => m.better !== 'none');
  const verdict = (scenario: string, metric: string) =>
    s.verdicts.find((v) => v.scenario === scenario && v.metric === metric);
  const parts: string[] = [];
  parts.push(
    `<!DOCTYPE html>\n<html lang="en">\n<head>\n<meta charset="utf-8">\n<title>${esc(input.title)}</title>\n<style>${CSS}</style>\n</head>\n<body>`,
  );
  parts.push(`<h1>${esc(input.title)}</h1>`);
  if (input.command) parts.push(`<p class="small">made by <code>${esc(input.command)}</code></p>`);
  const variantList = s.variants
    .map(
      (v) =>
        `<b>${esc(v.name)}</b> (${
          Object.keys(v.crs).length === 0
            ? 'the scenario’s own settings'
            : Object.entries(v.crs)
                .map(([k, x]) => `<code>${esc(k)}=${esc(String(x))}</code>`)
                .join(' ')
        })`,
    )
    .join(', ');
  parts.push(
    `<p>${s.scenarios.length} scenario${s.scenarios.length === 1 ? '' : 's'} × ${variants.length} variant${variants.length === 1 ? '' : 's'} (${variantList}) × ${s.seeds.length} seed${s.seeds.length === 1 ? '' : 's'} (${esc(seedList(s.seeds))}).</p>`,
  );
  parts.push(
    `<p class="how"><b>How to read this:</b> every metric is better <i>lower</i>. A verdict names the variant(s) with the best mean across seeds, then “best mean vs the next variant’s mean” and the difference relative to the next one. Grey: a “tie” (every variant had the same mean), or a lead <i>within noise</i> (the mean per-seed difference is not more than twice its standard error; each seed is the same cluster for every variant). Per scenario: a table of mean ± standard deviation, median (p50) and 95th percentile (p95) across seeds; guest contention over time where the scenario uses the simulator’s load pressure model, and imbalance over time (mean across seeds, band from the lowest to the highest seed); every balancer move of every seed (red crosses failed); node load and pressure of each variant’s first seed, side by side. <i>Guest contention-seconds</i>: how long guests wanted cpu and waited, were stalled on memory or by migrations (their own, or the transfers’ cpu on their node: <i>of which migrations</i> is that part), summed over guests — the simulator’s ground truth under its load pressure model, which no policy sees (“no load pressure model” where the scenario scripts its pressure). <i>Pressure node-seconds</i>: seconds × online nodes with PSI cpu ≥ 10 % or memory ≥ 5 %. For a generated scenario each seed is another cluster drawn from the same parameters, with its own noise.</p>`,
  );

  // verdicts: one row per scenario, one column per judged metric
  parts.push(`<h2>Verdicts</h2>`);
  parts.push(
    '<table class="verdicts"><tr><th>scenario</th>' +
      judged
        .map(
          (m) =>
            `<th>${esc(m.label)}${m.displayUnit ? ` <span class="small">(${esc(m.displayUnit)})</span>` : ''}</th>`,
        )
        .join('') +
      '</tr>',
  );
  for (const sc of s.scenarios) {
    parts.push(
      `<tr><th><a href="#${esc(anchor(sc))}">${esc(sc)}</a></th>` +
        judged.map((m) => verdictCell(verdict(sc, m.key), m, variants.length)).join('') +
        '</tr>',
    );
  }
  parts.push('</table>');
  if (variants.length > 1) {
    const wins = new Map(variants.map((v) => [v, 0]));
    let judgedCount = 0;
    let noise = 0;
    for (const v of s.verdicts) {
      if (v.next === null) continue;
      if (v.clear === false) {
        noise++;
        continue;
      }
      judgedCount++;
      for (const b of v.best) wins.set(b, (wins.get(b) ?? 0) + 1);
    }
    parts.push(
      `<p class="wins">Best (alone or shared) over all scenarios and metrics, of ${judgedCount} clear verdicts (ties, leads within noise${noise > 0 ? ` (${noise})` : ''} and n/a left out): ${variants.map((v) => `<b>${esc(v)}</b> ${wins.get(v)}`).join(', ')}.</p>`,
    );
  }

  let chart = 0;
  const render = async (spec: Parameters<typeof renderSvg>[0]) => renderSvg(spec, `c${++chart}`);
  if (s.prediction) parts.push(await predictionSection(s.prediction, digests, render));
  if (s.balance) parts.push(await balanceSection(s.balance, variants, render));

  // per scenario
  for (const sc of s.scenarios) {
    const ds = digests.filter((d) => d.scenario === sc);
    const horizon = Math.max(0, ...ds.map((d) => d.endTime));
    parts.push(
      `<section class="scenario" id="${esc(anchor(sc))}" data-scenario="${esc(sc)}">\n<h2>Scenario ${esc(sc)}</h2>`,
    );
    const description = input.descriptions?.get(sc);
    if (description) parts.push(`<p class="desc">${esc(description)}</p>`);
    parts.push(`<h3>Summary metrics across seeds</h3>`);
    parts.push(
      '<table><tr><th rowspan="2">metric</th><th rowspan="2">unit</th>' +
        variants.map((v) => `<th colspan="3">${esc(v)}</th>`).join('') +
        '</tr><tr>' +
        variants.map(() => '<th>mean ± sd</th><th>p50</th><th>p95</th>').join('') +
        '</tr>',
    );
    for (const m of METRICS) {
      const cells = variants
        .map((v) => {
          const st = s.stats.find((x) => x.scenario === sc && x.variant === v && x.metric === m.key);
          return statCell(m, st?.stats, st?.reason);
        })
        .join('');
      parts.push(
        `<tr><th>${esc(m.label)}<br><span class="small">${esc(m.description)}</span></th><td>${esc(m.displayUnit || m.unit)}</td>${cells}</tr>`,
      );
    }
    parts.push('</table>');
    const contention = contentionSpec(ds, variants, `Guest contention over time — ${sc}`);
    if (contention) parts.push(figure('contention', sc, undefined, await render(contention)));
    parts.push(
      figure('imbalance', sc, undefined, await render(imbalanceSpec(ds, variants, `Node imbalance over time — ${sc}`))),
    );
    parts.push(figure('moves', sc, undefined, await render(movesSpec(ds, variants, `Balancer moves — ${sc}`))));
    // node load and pressure of each variant's first seed, side by side
    const columns: string[] = [];
    const firsts = variants
      .map((v) => ds.find((d) => d.variant === v && d.nodes))
      .filter((d): d is RunDigest => d !== undefined);
    const peak = (q: 'load' | 'pressure') => Math.max(0, ...firsts.map((d) => nodePeak(d, q)));
    for (const v of variants) {
      const first = ds.find((d) => d.variant === v && d.nodes);
      if (!first) continue;
      const col = [`<div><h4>${esc(v)} (seed ${first.seed})</h4>`];
      const load = nodeSpec(first, 'load', `Node load — ${v}`, horizon, NODE_CHART_WIDTH, peak('load'));
      if (load.spec) col.push(figure('load', sc, v, await render(load.spec)));
      const pressure = nodeSpec(first, 'pressure', `Node pressure — ${v}`, horizon, NODE_CHART_WIDTH, peak('pressure'));
      if (pressure.spec) col.push(figure('pressure', sc, v, await render(pressure.spec)));
      else if (pressure.notes.length > 0)
        col.push(`<p class="note">Node pressure — ${esc(v)}: ${esc(pressure.notes.join('; '))}.</p>`);
      else col.push(`<p class="note">Node pressure — ${esc(v)}: this run carries no pressure telemetry.</p>`);
      col.push('</div>');
      columns.push(col.join('\n'));
    }
    if (columns.length > 0)
      parts.push(`<h3>Nodes — ${esc(sc)}</h3>\n<div class="variants">\n${columns.join('\n')}\n</div>`);
    parts.push('</section>');
  }
  parts.push(
    `<p class="small">Numbers for machines: <code>summary.json</code>, <code>summary.csv</code> and <code>runs.csv</code> beside this file; the tables as Markdown: <code>summary.md</code>.</p>`,
  );
  parts.push('</body>\n</html>\n');
  return parts.join('\n');
}

/** The contention model's prediction error: a table per cpu curve family and the chart of every point. */
async function predictionSection(
  stats: NonNullable<LabSummary['prediction']>,
  digests: readonly RunDigest[],
  render: (spec: NonNullable<ReturnType<typeof predictionSpec>>) => Promise<string>,
): Promise<string> {
  const points = digests.flatMap((d) => d.predictions ?? []);
  const out = [
    `<h2>Prediction error</h2>`,
    `<p class="how">For every landed move of every run under the load pressure model: <code>@poise/contention</code>, learning from what the balancer saw until the move (node load and reported PSI), predicts the cpu pressure of source and target at the load each shows once the guest runs on the target; realised is the simulator’s PSI cpu some share then (its ground truth, without noise or delay). Absolute error in percentage points, per the node’s cpu curve family.</p>`,
    '<table class="prediction"><tr><th>cpu curve family</th><th>points</th><th>from the usage prior</th><th>median |error| (pp)</th><th>p90 (pp)</th><th>max (pp)</th></tr>',
    ...stats.map(
      (x) =>
        `<tr><th>${esc(x.family)}</th><td>${x.n}</td><td>${x.usage}</td><td>${fmt(x.median)}</td><td>${fmt(x.p90)}</td><td>${fmt(x.max)}</td></tr>`,
    ),
    '</table>',
  ];
  const spec = predictionSpec(points, 'Predicted against realised cpu pressure after a move');
  if (spec) out.push(`<figure class="chart" data-chart="prediction">\n${await render(spec)}\n</figure>`);
  return out.join('\n');
}

function figure(kind: string, scenario: string, variant: string | undefined, svg: string): string {
  const v = variant === undefined ? '' : ` data-variant="${esc(variant)}"`;
  return `<figure class="chart" data-chart="${kind}" data-scenario="${esc(scenario)}"${v}>\n${svg}\n</figure>`;
}

function anchor(s: string): string {
  return `scenario-${s.replace(/[^A-Za-z0-9_-]/g, '-')}`;
}

/** `1..20` for a run of consecutive seeds, else a comma list. */
function seedList(seeds: readonly number[]): string {
  if (seeds.length > 2 && seeds.every((x, i) => i === 0 || x === seeds[i - 1]! + 1))
    return `${seeds[0]}..${seeds[seeds.length - 1]}`;
  return seeds.join(', ');
}

/** Writes report.html into `out`. */
export async function writeReport(out: string, input: ReportInput): Promise<string> {
  mkdirSync(out, { recursive: true });
  const file = join(out, 'report.html');
  writeFileSync(file, await buildReport(input));
  return file;
}
