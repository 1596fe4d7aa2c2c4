import { checkPipelineState } from '../balancing/policy';
import { type DaemonState, initialState, StateStore } from './state';
import type { DaemonContext } from './context';
import { describeMotion } from './text';

/**
 * The daemon's persistent state (pipeline state, the motion in flight, motions of the last
 * hour, outcomes) and its file: every change is saved before it is applied, so a restart
 * forgets nothing and re-issues nothing.
 */
export class StateKeeper {
  private current: DaemonState = initialState();
  readonly store: StateStore;

  constructor(
    private readonly ctx: DaemonContext,
    path: string,
    /** `--once`: the file is read, never written (a daemon may be running on it). */
    private readonly readOnly = false,
  ) {
    this.store = new StateStore(path, () => ctx.now());
  }

  get state(): DaemonState {
    return this.current;
  }

  /**
   * Saves a state change, then applies it (write-ahead for motions): when the file cannot be
   * written the round fails and the state in memory stays as it was, so no request goes out.
   */
  update(change: Partial<DaemonState>): void {
    const next = { ...this.current, ...change };
    if (!this.readOnly) this.store.save(next);
    this.current = next;
    this.ctx.metrics.motionInFlight.set(this.current.motion ? 1 : 0);
  }

  /** Loads the state file (at start, and when becoming active: another instance may have written it). */
  load(event: string): void {
    const loaded = this.store.load({ setAside: !this.readOnly });
    this.current = loaded.state;
    const path = this.store.path;
    const log = this.ctx.log;
    if (loaded.status === 'missing') {
      log.info('state', `no state file at '${path}' yet: starting afresh`);
    } else if (loaded.status === 'corrupt' && loaded.setAsidePath === undefined) {
      log.warn(
        'state',
        `the state file '${path}' is corrupt (${loaded.problem}): left as it is, this round starts without it`,
      );
    } else if (loaded.status === 'corrupt') {
      log.error(
        'state',
        `the state file '${path}' is corrupt (${loaded.problem}): moved aside to '${loaded.setAsidePath}'; starting afresh ` +
          '(hold counters and backoffs are lost; check the cluster for a motion in flight)',
        { setAside: loaded.setAsidePath ?? null },
      );
    } else {
      const m = this.current.motion;
      log.info(
        'state',
        `state loaded from '${path}'${m ? `; following the motion in flight from before: ${describeMotion(m)} (issued at ${this.ctx.timeText(m.issuedAt)}, ${m.phase})` : ''}`,
        { trigger: event },
      );
    }
    this.ctx.metrics.motionInFlight.set(this.current.motion ? 1 : 0);
    this.adoptPipelineState(this.current.pipeline, event);
  }

  /**
   * Takes a persisted pipeline state if every stage's part is valid for the pipeline in force;
   * otherwise each corrupt stage is named (stage and field), the whole pipeline state is set
   * aside in a file beside the state file, and the policy starts fresh — never silently.
   */
  adoptPipelineState(raw: unknown, event: string): void {
    const checked = checkPipelineState(this.ctx.policy.pipeline, raw);
    if ('state' in checked) {
      if (JSON.stringify(checked.state) !== JSON.stringify(this.current.pipeline))
        this.update({ pipeline: checked.state });
      return;
    }
    if (this.readOnly) {
      this.ctx.log.warn(
        'state',
        `the policy state is corrupt (${checked.problems.map((p) => p.message).join('; ')}): this round starts without it`,
      );
      this.update({ pipeline: {} });
      return;
    }
    const aside = this.store.setAsidePipeline(raw);
    this.ctx.log.error(
      'state',
      `the policy state is corrupt (${checked.problems.map((p) => p.message).join('; ')}): set aside in '${aside}'; the policy starts fresh ` +
        '(hold counters, backoffs, cooldowns and smoothing are lost)',
      { trigger: event, stages: checked.problems.map((p) => p.stage) },
    );
    this.update({ pipeline: {} });
  }
}
