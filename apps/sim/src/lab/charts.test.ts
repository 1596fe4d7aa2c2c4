import { describe, expect, it } from 'vitest';
import { imbalanceSpec, movesSpec, nodeSpec, renderSvg } from './charts';
import { digestTrace } from './compare';
import { TRACE_FORMAT, type RunTrace } from './trace';

// Names that are also JavaScript object keys, or that mean something in a Vega expression
// (a string literal `"constructor"` in an expression is read as a signal name there).
const NASTY = [
  '__proto__',
  'constructor',
  'toString',
  'valueOf',
  'hasOwnProperty',
  'datum',
  'width',
  'isPrototypeOf',
  'a"b\\c',
];

/** A run of `nodes` over 100 s with load, pressure and one move per node. */
function trace(variant: string, nodes: readonly string[]): RunTrace {
  const time = [0, 40, 80];
  const col = <T>(f: (i: number, r: number) => T) => nodes.map((_, i) => time.map((_t, r) => f(i, r)));
  return {
    format: TRACE_FORMAT,
    scenario: 'constructor',
    variant,
    seed: 1,
    endTime: 100,
    nodes: [...nodes],
    rounds: {
      time,
      imbalance: [0.5, 0.3, 0.1],
      cpu: col((i, r) => (i + r) / 20),
      mem: col((i) => i / 40),
      online: col(() => true),
      pressureCpu: col((i, r) => i + r),
      pressureMem: col((i) => i),
    },
    moves: nodes.map((n, i) => ({
      time: 40,
      sid: `vm:${100 + i}`,
      source: n,
      target: nodes[(i + 1) % nodes.length]!,
      ok: i % 2 === 0,
      outcomeAt: 60,
    })),
  };
}

/** The texts of an SVG (legend and axis labels, titles). */
const texts = (svg: string) =>
  [...svg.matchAll(/<text[^>]*>([^<]*)<\/text>/g)].map((m) => m[1]!.replace(/&quot;/g, '"'));

describe('charts with names from input', () => {
  it.each([
    // one legend for both panels
    ['lines', NASTY.slice(0, 5), 1],
    // one node axis per panel (cpu, memory)
    ['a heatmap', NASTY, 2],
  ])('node load and pressure (%s) render every node name, in the run’s order', async (_kind, nodes, panels) => {
    const digest = digestTrace(trace('valueOf', nodes), true);
    for (const quantity of ['load', 'pressure'] as const) {
      const { spec } = nodeSpec(digest, quantity, 'Node load — toString', 100);
      const svg = await renderSvg(spec!);
      const shown = texts(svg).filter((t) => nodes.includes(t));
      // each name once per legend or axis, in the order of the node list
      expect(shown).toEqual(Array.from({ length: panels }, () => nodes).flat());
    }
  });

  it('imbalance and moves charts render variants named like object keys', async () => {
    const variants = ['__proto__', 'constructor', 'toString'];
    const digests = variants.map((v) => digestTrace(trace(v, NASTY.slice(0, 3)), false));
    const imbalance = texts(await renderSvg(imbalanceSpec(digests, variants, 'Node imbalance — valueOf')));
    expect(imbalance.filter((t) => variants.includes(t))).toEqual(variants);
    const moves = texts(await renderSvg(movesSpec(digests, variants, 'Balancer moves — valueOf')));
    expect(moves.filter((t) => t.endsWith(' · seed 1'))).toEqual(variants.map((v) => `${v} · seed 1`));
  });
});
