import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, test } from 'vitest';
import { simulatedDay } from './testing/day-identity';

// The simulator's speed work (issue 28: a simulated day of the 64 × 5,000 case at least 3×
// faster) must not change a byte of what it simulates. These runs were recorded with the code
// before that work (main at 57344c6): the whole log (sha256) and the `poise-sim summary` line of
// generated cases that exercise its caches — the large case's shape at 500 guests (concurrent
// rounds, maintenance, a node failure, hourly stats commands), a hot node under the load
// pressure model (moves), failing migrations (refused and failed motions). A behaviour change
// that is meant (and re-blesses the reference logs it touches) records new values here. The
// small cases are in day-identity.test.ts (fast tier); this one takes over 10 s.
const root = mkdtempSync(join(tmpdir(), 'poise-day-identity-'));
afterAll(() => rmSync(root, { recursive: true, force: true }));

const day = (name: string, params: string, extra: string[]) => simulatedDay(root, name, params, extra);

describe('a simulated day is the same, byte for byte, as before the speed work', () => {
  test('the large case at 500 guests, 2 h (64 nodes, concurrent rounds)', async () => {
    const r = await day('large', 'large/large-64x5000.yaml', ['--guests', '500', '--duration', '2h']);
    expect(r.log).toBe('a81436a895c9c4828c30fabff1b660cfbd3b2e9a1a1640ac4b006d1b9241096d');
    expect(r.summary).toBe(
      '{"guestContentionSeconds":null,"migrationSeconds":null,"moves":0,"failedMoves":0,"movesBySid":{},"pingPongs":0,"imbalanceTimeWeighted":0.04735672706982642,"pressureSeconds":10800,"simSeconds":7220}',
    );
  });
});
