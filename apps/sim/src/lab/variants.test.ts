import { readdirSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { CRS_KEYS } from '@poise/sim';
import { crsProblem, parseSeeds, parseVariants, readVariants } from './variants';

describe('parseVariants', () => {
  it('reads a map of variant → crs overrides, in file order', () => {
    const v = parseVariants(
      'defaults: {}\nrecommended:\n  ha-auto-rebalance-preset: recommended\nstrict:\n  ha-auto-rebalance-threshold: 50\n  ha-auto-rebalance: 1\n',
      'v.yaml',
    );
    expect(v.map((x) => x.name)).toEqual(['defaults', 'recommended', 'strict']);
    expect({ ...v[1]!.crs }).toEqual({ 'ha-auto-rebalance-preset': 'recommended' });
    expect({ ...v[2]!.crs }).toEqual({ 'ha-auto-rebalance-threshold': 50, 'ha-auto-rebalance': 1 });
  });
  it('reads JSON too', () => {
    expect(parseVariants('{"a": {"ha": "dynamic"}}', 'v.json')[0]!.crs.ha).toBe('dynamic');
  });
  const bad: { name: string; text: string; error: RegExp }[] = [
    {
      name: 'an unknown crs key, naming the file, the variant and the key',
      text: 'defaults: {}\nfast:\n  ha-auto-rebalance-speed: 3\n',
      error: /^'v\.yaml' fast: unknown crs key 'ha-auto-rebalance-speed' \(known: ha, /,
    },
    {
      name: 'a value that is a list',
      text: 'a:\n  ha-auto-rebalance-margin: [1, 2]\n',
      error: /^'v\.yaml' a\.ha-auto-rebalance-margin: expected a string, number or boolean, got a list$/,
    },
    {
      name: 'a number too large for a double (1e999)',
      text: 'a:\n  ha-auto-rebalance-threshold: 1e999\n',
      error:
        /^'v\.yaml' a\.ha-auto-rebalance-threshold: expected a finite number, got a number too large for a double \(1e999 and \.inf read as Infinity\)$/,
    },
    {
      name: 'an infinity (.inf)',
      text: 'a:\n  ha-auto-rebalance-backoff: -.inf\n',
      error:
        /^'v\.yaml' a\.ha-auto-rebalance-backoff: expected a finite number, got a negative number too large for a double/,
    },
    { name: 'a variant that is not a map', text: 'a: 3\n', error: /^'v\.yaml' a: expected a map of crs key/ },
    {
      name: 'a document that is a list',
      text: '- a\n- b\n',
      error: /^'v\.yaml' \(top level\): expected a map of variant name/,
    },
    { name: 'an empty document', text: '', error: /'v\.yaml' \(top level\): expected a map/ },
    { name: 'no variants', text: '{}', error: /^'v\.yaml': no variants/ },
    { name: 'invalid YAML', text: 'a: {b: 1\n', error: /^'v\.yaml': invalid YAML/ },
    { name: 'a duplicate variant', text: 'a: {}\na: {}\n', error: /^'v\.yaml': invalid YAML: .*unique/ },
    {
      name: 'a value the key does not accept, naming the variant and key',
      text: 'defaults: {}\nslow:\n  ha-auto-rebalance-backoff: -5\n',
      error: /^'v\.yaml' slow\.ha-auto-rebalance-backoff: invalid value '-5' for 'crs\.ha-auto-rebalance-backoff'/,
    },
    { name: 'a bad variant name', text: '"a b": {}\n', error: /^'v\.yaml' a b: a variant name is/ },
  ];
  for (const c of bad) it(`rejects ${c.name}`, () => expect(() => parseVariants(c.text, 'v.yaml')).toThrow(c.error));
  it('reads every variants file of the lab (apps/sim/lab), each key and value as the simulator applies it', () => {
    const lab = fileURLToPath(new URL('../../lab/', import.meta.url));
    const files = readdirSync(lab).filter((f) => /^variants-.*\.yaml$/.test(f));
    expect(files).toContain('variants-contention-min-gain.yaml');
    for (const f of files) expect(readVariants(`${lab}${f}`).length).toBeGreaterThan(1);
    const minGain = readVariants(`${lab}variants-contention-min-gain.yaml`);
    expect(minGain.map((v) => v.crs['ha-auto-rebalance-contention-min-gain'])).toEqual([
      undefined,
      undefined,
      120,
      480,
    ]);
  });
  it('names from input such as __proto__ stay plain data', () => {
    const v = parseVariants('__proto__:\n  ha: static\n', 'v.yaml');
    expect(v[0]!.name).toBe('__proto__');
    expect(v[0]!.crs.ha).toBe('static');
  });
  it('accepts every key the simulator knows, the balancer’s variant keys included', () => {
    expect(CRS_KEYS).toContain('ha-auto-rebalance-backoff');
    const text = `v:\n${CRS_KEYS.filter(
      (k) =>
        k !== 'ha' &&
        k !== 'ha-auto-rebalance-method' &&
        k !== 'ha-auto-rebalance-preset' &&
        k !== 'ha-auto-rebalance-pressure-missing' &&
        k !== 'ha-auto-rebalance-objective',
    )
      .map((k) => `  ${k}: 1\n`)
      .join(
        '',
      )}  ha: dynamic\n  ha-auto-rebalance-method: topsis\n  ha-auto-rebalance-preset: recommended\n  ha-auto-rebalance-pressure-missing: hold\n  ha-auto-rebalance-objective: contention\n`;
    expect(Object.keys(parseVariants(text, 'v.yaml')[0]!.crs).sort()).toEqual([...CRS_KEYS].sort());
  });
  it('an empty string removes the key (its default applies)', () => {
    expect(parseVariants("ref: {ha-auto-rebalance-backoff: ''}", 'v.yaml')[0]!.crs).toEqual({
      'ha-auto-rebalance-backoff': '',
    });
  });
  it.each<[string, string | number | boolean, string | undefined]>([
    ['ha-auto-rebalance-backoff', 60, undefined],
    ['ha-auto-rebalance-memhost', true, undefined],
    ['ha-auto-rebalance-preset', 'recommended', undefined],
    [
      'ha-auto-rebalance-backoff',
      'soon',
      "invalid value 'soon' for 'crs.ha-auto-rebalance-backoff' (seconds, 0 to 3600)",
    ],
    ['ha-auto-rebalance-preset', 'fast', "invalid value 'fast' for 'crs.ha-auto-rebalance-preset'"],
    ['ha-auto-rebalance-margin', -1, 'expected a finite number from 0 to 100'],
    // percent: above 100 nothing could ever balance
    ['ha-auto-rebalance-threshold', 150, 'expected a finite number from 0 to 100'],
    ['ha-auto-rebalance-method', 'random', 'expected bruteforce or topsis'],
    ['ha-auto-rebalance-speed', 1, "unknown crs key 'ha-auto-rebalance-speed'"],
  ])('crsProblem(%s, %j)', (key, value, problem) => {
    const got = crsProblem(key, value);
    if (problem === undefined) expect(got).toBeUndefined();
    else expect(got).toContain(problem);
  });
  it('an unreadable file is an error naming it', () => {
    expect(() => readVariants('/nonexistent/variants.yaml')).toThrow(/^cannot read '\/nonexistent\/variants\.yaml'/);
  });
});

describe('parseSeeds', () => {
  const good: [string, number[]][] = [
    ['1..5', [1, 2, 3, 4, 5]],
    ['1,5,9', [1, 5, 9]],
    ['9,1', [1, 9]],
    ['0..2,10', [0, 1, 2, 10]],
    ['7', [7]],
    [' 3 , 4 ', [3, 4]],
  ];
  for (const [spec, want] of good) it(`'${spec}'`, () => expect(parseSeeds(spec)).toEqual(want));
  const bad: [string, RegExp][] = [
    ['', /empty/],
    ['5..1', /runs backwards/],
    ['-1', /is not a seed/],
    ['1.5', /is not a seed/],
    ['a..b', /is not a seed/],
    ['1,,2', /'' is not a seed/],
    ['1..3,2', /seed 2 given twice/],
    ['0..100000', /more than 10000 seeds/],
    ['99999999999999999999', /too large/],
    // the simulator's seeds are 32-bit: 2^32 − 1 is the largest
    ['4294967296', /seed 4294967296 is too large \(at most 4294967295\)/],
  ];
  for (const [spec, err] of bad) it(`rejects '${spec}'`, () => expect(() => parseSeeds(spec)).toThrow(err));
});
