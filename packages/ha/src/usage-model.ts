import type { Env } from '@poise/env';
import { BasicUsage, type OnlineNodeUsage } from './scheduler';

/** Builds the usage model for a scheduler mode, falling back to basic as the reference does. */
export function createUsage(env: Env, mode: string, onlineNodes: string[], _profile: string): OnlineNodeUsage {
  if (mode !== 'basic' && mode !== 'static' && mode !== 'dynamic') {
    env.log('warning', `got unknown scheduler mode '${mode}', using 'basic'`);
  }
  return new BasicUsage(onlineNodes);
}
