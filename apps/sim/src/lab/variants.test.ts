import { describe, expect, it } from 'vitest';
import { KNOWN_CRS_KEYS, parseSeeds, parseVariants, readVariants } from './variants';

describe('parseVariants', () => {
  it('reads a map of variant → crs overrides, in file order', () => {
    const v = parseVariants('defaults: {}\nrecommended:\n  ha-auto-rebalance-preset: recommended\nstrict:\n  ha-auto-rebalance-threshold: 50\n  ha-auto-rebalance: 1\n', 'v.yaml');
    expect(v.map((x) => x.name)).toEqual(['defaults', 'recommended', 'strict']);
    expect({ ...v[1]!.crs }).toEqual({ 'ha-auto-rebalance-preset': 'recommended' });
    expect({ ...v[2]!.crs }).toEqual({ 'ha-auto-rebalance-threshold': 50, 'ha-auto-rebalance': 1 });
  });
  it('reads JSON too', () => {
    expect(parseVariants('{"a": {"ha": "dynamic"}}', 'v.json')[0]!.crs.ha).toBe('dynamic');
  });
  const bad: { name: string; text: string; error: RegExp }[] = [
    { name: 'an unknown crs key, naming the file, the variant and the key', text: 'defaults: {}\nfast:\n  ha-auto-rebalance-speed: 3\n', error: /^'v\.yaml' fast: unknown crs key 'ha-auto-rebalance-speed' \(known: ha, / },
    { name: 'a value that is a list', text: 'a:\n  ha-auto-rebalance-margin: [1, 2]\n', error: /^'v\.yaml' a\.ha-auto-rebalance-margin: expected a string, number or boolean/ },
    { name: 'a variant that is not a map', text: 'a: 3\n', error: /^'v\.yaml' a: expected a map of crs key/ },
    { name: 'a document that is a list', text: '- a\n- b\n', error: /^'v\.yaml' \(top level\): expected a map of variant name/ },
    { name: 'an empty document', text: '', error: /'v\.yaml' \(top level\): expected a map/ },
    { name: 'no variants', text: '{}', error: /^'v\.yaml': no variants/ },
    { name: 'invalid YAML', text: 'a: {b: 1\n', error: /^'v\.yaml': invalid YAML/ },
    { name: 'a duplicate variant', text: 'a: {}\na: {}\n', error: /^'v\.yaml': invalid YAML: .*unique/ },
    { name: 'a bad variant name', text: '"a b": {}\n', error: /^'v\.yaml' a b: a variant name is/ },
  ];
  for (const c of bad) it(`rejects ${c.name}`, () => expect(() => parseVariants(c.text, 'v.yaml')).toThrow(c.error));
  it('names from input such as __proto__ stay plain data', () => {
    const v = parseVariants('__proto__:\n  ha: static\n', 'v.yaml');
    expect(v[0]!.name).toBe('__proto__');
    expect(v[0]!.crs.ha).toBe('static');
  });
  it('the known keys can be extended', () => {
    expect(parseVariants('x: {my-key: 1}', 'v.yaml', [...KNOWN_CRS_KEYS, 'my-key'])[0]!.crs['my-key']).toBe(1);
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
  ];
  for (const [spec, err] of bad) it(`rejects '${spec}'`, () => expect(() => parseSeeds(spec)).toThrow(err));
});
