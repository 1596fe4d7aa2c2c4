import { REASON_FORMAT } from '../balancing/policy';

// How the daemon writes imbalances, motions and times in its lines (every concern uses them).

/** An imbalance (a fraction) → `12.3%`, as the policy's reasons print it. */
export function percent(fraction: number): string {
  return REASON_FORMAT.value('imbalance', fraction);
}

/** `migrate vm:101 (with vm:102) from node1 to node2`. */
export function describeMotion(m: {
  kind: string;
  sid: string;
  source: string;
  target: string;
  resources?: readonly string[];
}): string {
  const along =
    m.resources !== undefined && m.resources.length > 1
      ? ` (with ${m.resources.filter((r) => r !== m.sid).join(', ')})`
      : '';
  return `${m.kind} ${m.sid}${along} from ${m.source} to ${m.target}`;
}

/** Epoch seconds as a UTC time without milliseconds (`2026-01-01T00:01:00Z`). */
export function utcTime(seconds: number): string {
  return new Date(Math.round(seconds) * 1000).toISOString().replace(/\.000Z$/, 'Z');
}

/**
 * Epoch seconds in a policy text (`… until 1767225660`) as times: UTC (`… until
 * 2026-01-01T00:01:00Z`), or as `label` writes them (the simulator's `sim 00:01:00`).
 */
export function readableTimes(text: string, label: (seconds: number) => string = utcTime): string {
  return text.replace(
    /\b(until|at) (\d{10}(?:\.\d+)?)\b/g,
    (_m, word: string, seconds: string) => `${word} ${label(Number(seconds))}`,
  );
}
