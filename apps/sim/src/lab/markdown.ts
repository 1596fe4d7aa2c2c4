import { balanceMarkdown } from './balance-summary';
import type { LabSummary } from './digest';
import { fmt } from './format';
import { METRICS, type MetricDef } from './stats';

function shown(m: MetricDef, v: number | null | undefined): string {
  if (v === null || v === undefined) return '—';
  return fmt(v * m.displayScale);
}

/**
 * summary.md: the comparison as two Markdown tables, for a README or a review: mean ± sd of every
 * judged metric per scenario and variant, and the verdicts (best variant, best mean vs the next
 * one's, relative difference). Imbalance in percent; sd omitted for a single seed.
 */
export function summaryMarkdown(s: LabSummary): string {
  const judged = METRICS.filter((m) => m.better !== 'none');
  const head = (first: string[]) => {
    const cols = [...first, ...judged.map((m) => (m.displayUnit ? `${m.label} (${m.displayUnit})` : m.label))];
    return `| ${cols.join(' | ')} |\n|${cols.map(() => '---').join('|')}|\n`;
  };
  const lines: string[] = [];
  lines.push(
    `${s.scenarios.length} scenarios × ${s.variants.length} variants × seeds ${seedText(s.seeds)}; mean ± sd across seeds (better lower).`,
    '',
  );
  let table = head(['scenario', 'variant']);
  for (const sc of s.scenarios) {
    s.variants.forEach((v, i) => {
      const cells = judged.map((m) => {
        const st = s.stats.find((x) => x.scenario === sc && x.variant === v.name && x.metric === m.key);
        if (!st?.stats) return st?.reason ?? '—';
        return st.stats.sd === null ? shown(m, st.stats.mean) : `${shown(m, st.stats.mean)} ± ${shown(m, st.stats.sd)}`;
      });
      table += `| ${i === 0 ? sc : ''} | ${v.name} | ${cells.join(' | ')} |\n`;
    });
  }
  lines.push(table);
  lines.push(
    'Verdicts (the variant with the best mean, in bold when its lead is clear of the seed-to-seed noise: more than twice the standard error of the per-seed difference; best mean vs the next variant’s, relative difference):',
    '',
  );
  table = head(['scenario']);
  for (const sc of s.scenarios) {
    const cells = judged.map((m) => {
      const v = s.verdicts.find((x) => x.scenario === sc && x.metric === m.key);
      if (!v) return '—';
      if (v.next === null) return v.note === 'tie' ? `tie (${shown(m, v.bestMean)})` : (v.note ?? '—');
      const rel = v.relative === null ? '' : `, ${m.better === 'lower' ? '−' : '+'}${fmt(v.relative * 100)} %`;
      const than = s.variants.length > 2 ? ` (${v.next})` : '';
      const detail = `${shown(m, v.bestMean)} vs ${shown(m, v.nextMean)}${than}${rel}`;
      return v.clear === false
        ? `${v.best.join(' and ')} ${detail} (within noise)`
        : `**${v.best.join(' and ')}** ${detail}`;
    });
    table += `| ${sc} | ${cells.join(' | ')} |\n`;
  }
  lines.push(table);
  if (s.prediction) {
    lines.push(
      '',
      'Prediction error of the contention model (predicted against realised node cpu pressure after every landed move of every run, percentage points):',
      '',
    );
    table =
      '| cpu curve family | points | from the usage prior | median abs. error (pp) | p90 (pp) | max (pp) |\n|---|---|---|---|---|---|\n';
    for (const x of s.prediction)
      table += `| ${x.family} | ${x.n} | ${x.usage} | ${fmt(x.median)} | ${fmt(x.p90)} | ${fmt(x.max)} |\n`;
    lines.push(table);
  }
  if (s.balance?.groups.length) lines.push(balanceMarkdown(s.balance));
  return `${lines.join('\n')}`;
}

function seedText(seeds: readonly number[]): string {
  if (seeds.length > 2 && seeds.every((x, i) => i === 0 || x === seeds[i - 1]! + 1))
    return `${seeds[0]}..${seeds[seeds.length - 1]}`;
  return seeds.join(', ');
}
