import type { HaDaemonState } from './types';

const MODES = new Set(['maintenance', 'restart', 'shutdown', 'disarm', 'active']);

/**
 * Read an HA daemon's state from the free text of `/cluster/ha/status/current`:
 * `"<node> (<state>[, watchdog <w>][, <local time>])"`, where `<state>` is `active`, `idle`,
 * `<mode> mode`, `old timestamp - dead?`, `detected time drift!` or `unable to read lrm status`.
 */
export function parseDaemonStatus(node: string, text: string): { state: HaDaemonState; watchdog: string | undefined } {
  let inner = text.trim();
  if (inner.startsWith(`${node} (`)) inner = inner.slice(node.length + 2);
  else if (inner.startsWith('(')) inner = inner.slice(1);
  else {
    const open = inner.indexOf(' (');
    if (open < 0) return { state: 'unknown', watchdog: undefined };
    inner = inner.slice(open + 2);
  }
  if (inner.endsWith(')')) inner = inner.slice(0, -1);
  const parts = inner.split(', ').map((p) => p.trim());
  const head = parts[0] ?? '';
  const watchdogPart = parts.find((p) => p.startsWith('watchdog '));
  const watchdog = watchdogPart?.slice('watchdog '.length);
  let state: HaDaemonState = 'unknown';
  if (head === 'active' || head === 'idle') state = head;
  else if (head.endsWith(' mode')) {
    const mode = head.slice(0, -' mode'.length);
    state = MODES.has(mode) ? (mode as HaDaemonState) : 'unknown';
  } else if (head.startsWith('old timestamp')) state = 'dead';
  else if (head.includes('time drift')) state = 'time-drift';
  else if (head.startsWith('unable to read')) state = 'unreadable';
  return { state, watchdog };
}
