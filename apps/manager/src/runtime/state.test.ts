import { existsSync, mkdtempSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ManagerError } from '../errors';
import type { MotionRecord } from '../cluster/port';
import { type DaemonState, initialState, MAX_KEPT_OUTCOMES, STATE_FORMAT, STATE_VERSION, StateStore } from './state';
import { motionRecord, T0 } from '../testing/support';

const MOTION: MotionRecord = motionRecord({ imbalanceBefore: 0.5, imbalanceAfter: 0.2 });
const STATE: DaemonState = {
  pipeline: { 'threshold-hold': { sustainedRounds: 2 }, 'a-future-stage': { backoff: { 'vm:101>node2': 1767226000 } } },
  motion: MOTION,
  motionsIssuedAt: [T0],
  outcomes: [
    {
      sid: 'vm:102',
      source: 'node1',
      target: 'node3',
      via: 'ha',
      result: 'failed',
      reason: 'back on the source',
      at: T0 - 60,
    },
  ],
  unreported: [{ resources: ['vm:102'], source: 'node1', target: 'node3', ok: false, detail: 'back on the source' }],
};

function store() {
  const dir = mkdtempSync(join(tmpdir(), 'poise-state-'));
  return { dir, path: join(dir, 'state.json'), store: new StateStore(join(dir, 'state.json'), () => T0) };
}

describe('StateStore', () => {
  it('starts afresh when there is no file', () => {
    expect(store().store.load()).toEqual({ state: initialState(), status: 'missing' });
  });

  it('saves and loads the same state (stage state of unknown stages included), leaving no temporary file', () => {
    const s = store();
    expect(s.store.save(STATE)).toBe(true);
    expect(readdirSync(s.dir)).toEqual(['state.json']);
    const doc = JSON.parse(readFileSync(s.path, 'utf8'));
    expect(doc).toMatchObject({ format: STATE_FORMAT, version: STATE_VERSION, savedAt: '2026-01-01T00:00:00.000Z' });
    const loaded = new StateStore(s.path, () => T0).load();
    expect(loaded.status).toBe('loaded');
    expect(loaded.state).toEqual(STATE);
  });

  it('writes only when the content changed', () => {
    const s = store();
    expect(s.store.save(STATE)).toBe(true);
    expect(s.store.save({ ...STATE })).toBe(false);
    expect(s.store.save({ ...STATE, motion: null })).toBe(true);
    const again = new StateStore(s.path, () => T0 + 5);
    again.load();
    expect(again.save({ ...STATE, motion: null })).toBe(false); // same content as on disk
  });

  it(`keeps the last ${MAX_KEPT_OUTCOMES} outcomes`, () => {
    const s = store();
    const outcomes = Array.from({ length: MAX_KEPT_OUTCOMES + 5 }, (_, i) => ({ ...STATE.outcomes[0]!, at: i }));
    s.store.save({ ...STATE, outcomes });
    const loaded = new StateStore(s.path, () => T0).load().state.outcomes;
    expect(loaded).toHaveLength(MAX_KEPT_OUTCOMES);
    expect(loaded[0]!.at).toBe(5);
  });

  it.each([
    ['not JSON', '{"format": "poise-manager-state", "version": 1, ', /^not JSON/],
    [
      'a wrong field',
      JSON.stringify({
        format: STATE_FORMAT,
        version: 1,
        savedAt: 'x',
        pipeline: {},
        motion: { sid: 1 },
        motionsIssuedAt: [],
        outcomes: [],
      }),
      /^'motion\.sid' is invalid/,
    ],
    ['another format', JSON.stringify({ hello: 'world' }), /^'format' is invalid/],
    ['an empty file', '', /^not JSON/],
  ])('sets a corrupt file aside with a timestamp and reports it: %s', (_name, text, problem) => {
    const s = store();
    writeFileSync(s.path, text);
    const loaded = s.store.load();
    expect(loaded.status).toBe('corrupt');
    expect(loaded.problem).toMatch(problem);
    expect(loaded.setAsidePath).toBe(`${s.path}.corrupt-20260101T000000Z`);
    expect(loaded.state).toEqual(initialState());
    expect(existsSync(s.path)).toBe(false);
    expect(readFileSync(loaded.setAsidePath!, 'utf8')).toBe(text); // kept, not destroyed
  });

  it.each([2, 0, 'one'])('refuses a state file of version %j clearly, and leaves it in place', (version) => {
    const s = store();
    const text = JSON.stringify({ format: STATE_FORMAT, version, future: true });
    writeFileSync(s.path, text);
    expect(() => s.store.load()).toThrow(ManagerError);
    expect(() => s.store.load()).toThrow(
      `the state file '${s.path}' has version ${JSON.stringify(version)}; this poise-manager reads version 1 only`,
    );
    expect(readFileSync(s.path, 'utf8')).toBe(text);
  });

  it('names the file when it cannot be written', () => {
    const { dir } = store();
    writeFileSync(join(dir, 'file'), ''); // a file where the directory should be
    const s = new StateStore(join(dir, 'file', 'state.json'), () => T0);
    expect(() => s.save(STATE)).toThrow(`cannot write the state file '${join(dir, 'file', 'state.json')}'`);
  });
});
