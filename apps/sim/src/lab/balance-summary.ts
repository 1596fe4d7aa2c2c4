/**
 * The lab's balance comparison (greedy vs planned): per run and per scenario × variant, the
 * moves to reach the balanced state, the hindsight oracle's moves and the regret (definitions
 * in `regret.ts`), as summary.json data, a Markdown table and a report section with a chart.
 */
import type { TopLevelSpec } from 'vega-lite';
import type { BalanceGroup, BalanceRun, BalanceSummary, RunDigest } from './digest';

export type { BalanceSummary } from './digest';
import { BALANCED_THRESHOLD } from './regret';
import type { Variant } from './variants';

/** The plan key: a variant that sets it truthy runs the planned balancer. */
export const PLAN_CRS_KEY = 'ha-auto-rebalance-plan';

const mean = (xs: readonly number[]) => (xs.length === 0 ? null : xs.reduce((a, b) => a + b, 0) / xs.length);

function median(xs: readonly number[]): number | null {
  if (xs.length === 0) return null;
  const s = [...xs].sort((a, b) => a - b);
  const h = (s.length - 1) / 2;
  return (s[Math.floor(h)]! + s[Math.ceil(h)]!) / 2;
}

/** Whether a variant runs the planned balancer (its plan key set to 1 / true). */
function isPlanned(variant: Pick<Variant, 'crs'>): boolean {
  const v = variant.crs[PLAN_CRS_KEY];
  return v === 1 || v === true || v === '1';
}

/** The balance figures of a comparison; `digests` in (scenario, variant, seed) order. */
export function balanceSummary(
  digests: readonly RunDigest[],
  scenarios: readonly string[],
  variants: readonly Variant[],
): BalanceSummary {
  const runs: BalanceRun[] = digests.map((d) => {
    const b = d.balance;
    const o = b.oracle;
    return {
      scenario: d.scenario,
      variant: d.variant,
      seed: d.seed,
      balancer: d.balance.balancer,
      moves: b.moves,
      balancedAt: b.reach.at,
      movesToBalance: b.reach.moves,
      oracleMoves: o?.moves ?? null,
      oracleSource: o?.source ?? null,
      plannerMoves: o?.plannerMoves ?? null,
      oracleBound: o?.bound ?? null,
      runDisplaced: o?.runDisplaced ?? null,
      regret: b.regret,
      excess: b.excess,
      imbalanceEnd: o?.imbalance.run ?? null,
      imbalanceOracle: o?.imbalance.oracle ?? null,
      ...(o === null ? { note: 'no placement recorded' } : o.note ? { note: o.note } : {}),
    };
  });
  const groups: BalanceGroup[] = [];
  for (const scenario of scenarios) {
    for (const v of variants) {
      const rs = runs.filter((r) => r.scenario === scenario && r.variant === v.name);
      if (rs.length === 0) continue;
      const reached = rs.flatMap((r) => (r.movesToBalance === null ? [] : [r.movesToBalance]));
      const oracle = rs.filter((r) => r.oracleMoves !== null);
      const finite = oracle.flatMap((r) => (r.regret === null ? [] : [r.regret]));
      groups.push({
        scenario,
        variant: v.name,
        // what the runs recorded; a trace without it: the variant's own key
        balancer: rs.every((r) => r.balancer === 'planned')
          ? 'planned'
          : rs.every((r) => r.balancer === 'greedy')
            ? 'greedy'
            : isPlanned(v)
              ? 'planned'
              : 'greedy',
        runs: rs.length,
        balanced: reached.length,
        movesToBalance: mean(reached),
        moves: mean(rs.map((r) => r.moves))!,
        withOracle: oracle.length,
        oracleMoves: mean(oracle.map((r) => r.oracleMoves!)),
        regretMean: mean(finite),
        regretMedian: median(finite),
        regretMax: finite.length === 0 ? null : Math.max(...finite),
        unbounded: oracle.filter((r) => r.regret === null).length,
        excess: mean(oracle.map((r) => r.excess!)),
      });
    }
  }
  return { threshold: BALANCED_THRESHOLD, runs, groups };
}

const num = (v: number | null, digits = 2) => (v === null ? '—' : Number.isInteger(v) ? String(v) : v.toFixed(digits));

/** The columns of the balance table, each cell as plain text (Markdown and HTML share them). */
function balanceTable(s: BalanceSummary): { head: string[]; rows: { scenario: string; cells: string[] }[] } {
  const head = [
    'scenario',
    'variant',
    'balancer',
    'balanced runs',
    'moves to balance',
    'moves',
    'oracle moves',
    'regret mean (median, max)',
    'regret ∞',
    'excess moves',
  ];
  const rows = s.groups.map((g) => ({
    scenario: g.scenario,
    cells: [
      g.variant,
      g.balancer,
      `${g.balanced}/${g.runs}`,
      num(g.movesToBalance),
      num(g.moves),
      g.withOracle === g.runs ? num(g.oracleMoves) : `${num(g.oracleMoves)} (${g.withOracle}/${g.runs} runs)`,
      g.regretMean === null ? '—' : `${num(g.regretMean)} (${num(g.regretMedian)}, ${num(g.regretMax)})`,
      String(g.unbounded),
      num(g.excess),
    ],
  }));
  return { head, rows };
}

/** What the balance table's columns mean, one paragraph (Markdown and HTML). */
function balanceLegend(s: BalanceSummary): string {
  const t = `${Math.round(s.threshold * 1000) / 10} %`;
  return (
    `Balanced: imbalance below ${t} at every sample from some time to the end of the run; *moves to balance* are the balancer moves issued up to that time (mean over the balanced runs). ` +
    'Oracle: from the run’s initial placement, with the loads and node states it ended with, the fewest migrations to a placement whose highest cpu and memory utilisation are no higher than the run’s final ones (`@poise/plan`, or the run’s own final placement when that is fewer). ' +
    'Regret = moves / oracle moves (1 when both are 0; ∞ counted apart when the oracle needs none and the run moved); excess = moves − oracle moves. Means over the seeds.'
  );
}

/** The balance table as Markdown (appended to summary.md). */
export function balanceMarkdown(s: BalanceSummary): string {
  if (s.groups.length === 0) return '';
  const { head, rows } = balanceTable(s);
  let out = `Balance: greedy vs planned. ${balanceLegend(s)}\n\n| ${head.join(' | ')} |\n|${head.map(() => '---').join('|')}|\n`;
  let last = '';
  for (const r of rows) {
    out += `| ${r.scenario === last ? '' : r.scenario} | ${r.cells.join(' | ')} |\n`;
    last = r.scenario;
  }
  return out;
}

const esc = (s: string) => s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;');

/**
 * The regret chart: one point per run with a finite regret (log scale, 1 = as few moves as the
 * oracle), a row per scenario and variant, a colour per variant; the subtitle counts the unbounded runs.
 * Null when no run has a finite regret.
 */
function regretSpec(s: BalanceSummary, variants: readonly string[]): TopLevelSpec | null {
  const row = (scenario: string, variant: string) => `${scenario} · ${variant}`;
  const values = s.runs
    .filter((r) => r.regret !== null)
    .map((r) => ({ row: row(r.scenario, r.variant), variant: r.variant, seed: r.seed, regret: r.regret! }));
  if (values.length === 0) return null;
  const unbounded = s.runs.filter((r) => r.regret === null && r.oracleMoves === 0).length;
  const none = s.runs.filter((r) => r.oracleMoves === null).length;
  const subtitle = [`${values.length} runs; regret = balancer moves / the hindsight oracle's (1: as few as possible)`];
  if (unbounded > 0) subtitle.push(`${unbounded} runs moved where the oracle needed no move (∞, not drawn)`);
  if (none > 0) subtitle.push(`${none} runs without an oracle`);
  const scenarios = [...new Set(s.runs.filter((r) => r.regret !== null).map((r) => r.scenario))];
  const rows = scenarios.flatMap((sc) => variants.map((v) => row(sc, v)));
  return {
    $schema: 'https://vega.github.io/schema/vega-lite/v6.json',
    title: { text: 'Regret per run', subtitle },
    width: 720,
    height: { step: 16 },
    data: { values },
    mark: { type: 'point', filled: true, size: 40, opacity: 0.7 },
    encoding: {
      x: { field: 'regret', type: 'quantitative', title: 'regret (log scale)', scale: { type: 'log', domainMin: 1 } },
      // a row per scenario and variant; names reach the chart only as data (orders as scale domains)
      y: { field: 'row', type: 'nominal', title: null, scale: { domain: rows } },
      color: { field: 'variant', type: 'nominal', title: 'variant', scale: { domain: [...variants] } },
      tooltip: [{ field: 'variant' }, { field: 'seed' }, { field: 'regret', format: '.2f' }],
    },
    config: {
      font: 'DejaVu Sans, Helvetica, Arial, sans-serif',
      title: { fontSize: 14, anchor: 'start', subtitleFontSize: 11, subtitleColor: '#555' },
      axis: { labelFontSize: 11, titleFontSize: 12, titleFontWeight: 'normal' },
      legend: { labelFontSize: 11, titleFontSize: 12, titleFontWeight: 'normal', orient: 'right' },
      view: { stroke: '#ccc' },
    },
  };
}

/** The report's balance section: the table and the regret chart (rendered by `render`). */
export async function balanceSection(
  s: BalanceSummary,
  variants: readonly string[],
  render: (spec: TopLevelSpec) => Promise<string>,
): Promise<string> {
  if (s.groups.length === 0) return '';
  const { head, rows } = balanceTable(s);
  const parts = [
    `<h2 id="balance">Balance: greedy vs planned, and regret</h2>`,
    `<p class="small">${esc(balanceLegend(s))
      .replace(/\*([^*]+)\*/g, '<i>$1</i>')
      .replace(/`([^`]+)`/g, '<code>$1</code>')}</p>`,
  ];
  parts.push(`<table class="balance"><tr>${head.map((h) => `<th>${esc(h)}</th>`).join('')}</tr>`);
  let last = '';
  for (const r of rows) {
    parts.push(
      `<tr><th>${r.scenario === last ? '' : esc(r.scenario)}</th>${r.cells.map((c) => `<td>${esc(c)}</td>`).join('')}</tr>`,
    );
    last = r.scenario;
  }
  parts.push('</table>');
  const spec = regretSpec(s, variants);
  if (spec) parts.push(`<figure class="chart" data-chart="regret">\n${await render(spec)}\n</figure>`);
  else parts.push('<p class="note">No run has a finite regret to chart.</p>');
  return parts.join('\n');
}
