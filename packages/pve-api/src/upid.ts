import type { Upid } from './types';

const HEX = /^[0-9A-Fa-f]+$/;

/**
 * Parse a task id `UPID:<node>:<pid hex>:<pstart hex>:<starttime hex>:<type>:<id>:<user>:`.
 * @returns the parts, or `undefined` when `text` is not a UPID
 */
export function parseUpid(text: string): Upid | undefined {
  const parts = text.split(':');
  if (parts.length !== 9 || parts[0] !== 'UPID' || parts[8] !== '') return undefined;
  const [, node, pid, pstart, start, type, id, user] = parts as [
    string,
    string,
    string,
    string,
    string,
    string,
    string,
    string,
  ];
  if (!node || !HEX.test(pid) || !HEX.test(pstart) || !HEX.test(start) || !type || !user) return undefined;
  return {
    upid: text,
    node,
    pid: parseInt(pid, 16),
    pstart: parseInt(pstart, 16),
    startTime: parseInt(start, 16),
    type,
    id,
    user,
  };
}
