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
// that is meant (and re-blesses the reference logs it touches) records new values here: issue
// 27 priced migrations with the migration model and added `migrationSeconds` to the summary
// (the logs stayed the same; the hot node's guests wait 73,362.28 guest-seconds instead of
// 73,369.13: its 3 migrations cost 0.47 guest-seconds, the transfers' cpu included, where the
// former price, (memory / bandwidth) × 0.2 + 0.1 s each, was more). The
// large case's shape is in day-identity.slow.test.ts (slow tier: over 10 s).
const root = mkdtempSync(join(tmpdir(), 'poise-day-identity-'));
afterAll(() => rmSync(root, { recursive: true, force: true }));

const day = (name: string, params: string, extra: string[]) => simulatedDay(root, name, params, extra);

describe('a simulated day is the same, byte for byte, as before the speed work', () => {
  test('a hot node under the load pressure model (moves)', async () => {
    const r = await day('hot-node', 'hot-node.yaml', []);
    expect(r.log).toBe('ae0dc83aaca842e73a28aaa786c1da474c82386dddf41749b7bd0677116a3032');
    expect(r.summary).toBe(
      '{"guestContentionSeconds":73362.2777035013,"migrationSeconds":0.4661000665105014,"moves":3,"failedMoves":0,"movesBySid":{"vm:101":1,"vm:110":1,"vm:122":1},"pingPongs":0,"imbalanceTimeWeighted":0.26997024640312856,"pressureSeconds":25180,"simSeconds":28820}',
    );
  });

  test('failing migrations (failed and refused motions)', async () => {
    const r = await day('failing', 'failing-migrations.yaml', []);
    expect(r.log).toBe('d4372952eef21e764ca08d909a93baf4ab6128d4d558579c2a4bd9b2868ee904');
    expect(r.summary).toBe(
      '{"guestContentionSeconds":null,"migrationSeconds":null,"moves":11,"failedMoves":9,"movesBySid":{"fa:1090100001":10,"vm:101":1},"pingPongs":0,"imbalanceTimeWeighted":0.18140115742930343,"pressureSeconds":null,"simSeconds":28820}',
    );
  });
});
