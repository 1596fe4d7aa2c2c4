import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { runComparison } from './src/lab/lab';
const root = '/tmp/labdemo';
const mk = (name: string, opts: object) => { mkdirSync(join(root, name), { recursive: true }); writeFileSync(join(root, name, 'synthetic.json'), JSON.stringify(opts)); return { name, dir: join(root, name) }; };
await runComparison({ scenarios: [mk('small', { nodes: 3, rounds: 360, pressure: true }), mk('wide', { nodes: 24, rounds: 300 })], variants: [{ name: 'defaults', crs: {} }, { name: 'calm', crs: { 'ha-auto-rebalance-threshold': 50 } }], seeds: [1, 2, 3, 4, 5], module: new URL('./src/lab/__fixtures__/synthetic-model.ts', import.meta.url), jobs: 2, out: '/tmp/labdemo/out', command: 'demo' });
