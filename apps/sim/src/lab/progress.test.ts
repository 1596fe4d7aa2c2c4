import { describe, expect, it } from 'vitest';
import { progressBar } from './progress';

describe('progressBar', () => {
  it('draws in place on a terminal and clears at the end', () => {
    const out: string[] = [];
    const p = progressBar({ isTTY: true, columns: 40, write: (c) => out.push(c) });
    p.update(1, 4);
    p.update(4, 4);
    p.done();
    // 40 columns: text ' 1/4 runs  25 %' (15) → bar of 40 − 15 − 3 = 22, a quarter filled (6)
    expect(out[0]).toBe('\r[######----------------] 1/4 runs  25 %');
    expect(out[1]).toBe('\r[######################] 4/4 runs 100 %');
    expect(out[2]).toBe(`\r${' '.repeat(out[1]!.length - 1)}\r`);
  });
  it('prints nothing when piped', () => {
    const out: string[] = [];
    const p = progressBar({ isTTY: false, write: (c) => out.push(c) });
    p.update(1, 2);
    p.done();
    expect(out).toEqual([]);
  });
});
