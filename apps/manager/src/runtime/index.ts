export { Daemon, type DaemonOptions } from './daemon';
export { MOTION_LIMIT_WINDOW_SECONDS } from './follower';
export type { RoundReport } from './report';
export { percent, readableTimes, utcTime } from './text';
