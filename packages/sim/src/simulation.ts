import type { DynamicNodeStats, DynamicServiceStats, ManagerStatus, Snapshot, StaticServiceStats } from '@poise/env';
import type { BalancerEvent, ManagerOptions } from '@poise/ha';
import type { PolicyRegistry } from '@poise/policy';
import type { CaseInput } from './case';
import { parseCommand, parseCommandOrThrow, type Command } from './commands';
import { SimError } from './errors';
import { Hardware } from './hardware';
import { MAX_SIM_TIME, type RoundModel, type SkipRounds } from './round-model';
import type { PressureModelKind } from './pressure/config';
import type { GuestContention, NodeContention } from './pressure/model';
import { compareNames } from '@poise/usage';

/** Options of a {@link Simulation}. */
export interface SimulationOptions {
  /** Reference behaviour profile (`pve-9.2` is the current release, `pve-5.2.0` the reference logs). */
  profile: ManagerOptions['profile'];
  /** Receives every log line as it is written (with its newline). */
  sink?(line: string): void;
  /**
   * The simulation aborts once simulated time passes this many seconds (default: the case's
   * `sim_options` `max-time`, else {@link MAX_SIM_TIME}, the reference's 10,000 s; `Infinity`
   * for long runs).
   */
  maxTimeSeconds?: number;
  /** Seed of the node noise (default: the case's `sim_options` `seed`, else 0); an integer 0..2^32−1. */
  seed?: number;
  /**
   * How a round's daemons are laid out in time (see {@link RoundModel}); by default the
   * reference's, and `concurrent` under `pve-9.2` from 30 nodes on. `pve-5.2.0` refuses
   * `concurrent` (the constructor throws `SimError` `bad-case`).
   */
  roundModel?: RoundModel;
  /**
   * The balancer's policy plug-ins (default the built-in ones, `BUILTIN_REGISTRY` of
   * `@poise/ha`): pass the registry the case was loaded with (`LoadOptions.registry`), so the
   * HA core runs the plug-ins whose keys the case sets.
   */
  registry?: PolicyRegistry;
}

/**
 * One node's measurement between two rounds ({@link Simulation.sample}): what the next round's
 * manager reads (cores, bytes, PSI percent).
 */
export interface NodeSample {
  /** Powered and networked, and the cluster is quorate. */
  online: boolean;
  cpu: number;
  maxcpu: number;
  mem: number;
  maxmem: number;
  /** PSI cpu some avg10, percent; undefined when the node reports none. */
  pressureCpu: number | undefined;
  /** PSI memory some avg10, percent; undefined when the node reports none. */
  pressureMem: number | undefined;
  /**
   * Load pressure model only (never shown to the HA core): the node's PSI cpu some share now,
   * percent, noise-free and without the average's delay — what the reported value moves to.
   */
  truthCpu?: number;
  /** Load pressure model only: the node's PSI memory some share now, percent, noise-free. */
  truthMem?: number;
}

/**
 * The load pressure model's ground truth ({@link Simulation.groundTruth}): per guest its
 * shares now and its stall seconds so far, per node its guests' stall seconds so far.
 */
export interface GroundTruth {
  /** By sid (byte order): every guest that ran since the start. */
  guests: ReadonlyMap<string, GuestContention>;
  /** By node (byte order). */
  nodes: ReadonlyMap<string, NodeContention>;
}

/** One node as the view shows it. */
export interface NodeView {
  power: 'on' | 'off';
  network: 'on' | 'off';
  /** Powered and networked, and the cluster is quorate. */
  online: boolean;
  /** Cores; undefined when `hardware_status` gives none. */
  maxcpu: number | undefined;
  /** Bytes; undefined when `hardware_status` gives none. */
  maxmem: number | undefined;
}

/** One configured service as the view shows it. */
export interface ServiceView {
  /** The node its config names. */
  node: string;
  /** Configured state after the defaults of a read (`enabled` reads as `started`, empty as `disabled`). */
  state: string;
  /** Whether it runs on its config node (the simulated running flag). */
  running: boolean;
  /** Configured maxima (cores, bytes) as given, if any; values are not validated. */
  staticStats: Snapshot<StaticServiceStats> | undefined;
  /** Measured usage (cores, bytes) as given, if any; values are not validated. */
  dynamicStats: Snapshot<DynamicServiceStats> | undefined;
  /**
   * The config's `lock` (`service_config` `lock`, or `service <sid> lock [<name>]`: `backup`,
   * `migrate`, ...); undefined when the guest is not locked.
   */
  lock?: string | undefined;
}

/**
 * A read-only picture of the simulated cluster between two rounds. Maps are keyed by node name
 * or service id (byte order); nothing in it changes when the simulation goes on.
 */
export interface ClusterView {
  /** Simulated time, seconds. */
  time: number;
  nodes: ReadonlyMap<string, NodeView>;
  /** Measured node usage: cpu cores, memory bytes, with the node's capacity. */
  nodeStats: ReadonlyMap<string, Readonly<DynamicNodeStats>>;
  services: ReadonlyMap<string, ServiceView>;
  /** The last manager status the CRM master wrote (`service_status`: state, node, target, ...). */
  managerStatus: Snapshot<ManagerStatus>;
  /** Per node, the mode its LRM last published (`active`, `maintenance`, ...), if any. */
  lrmModes: ReadonlyMap<string, string>;
}

/** What a round listener gets after each {@link Simulation.step}. */
export interface RoundEvent {
  /** Simulated time at the end of the round (after its command slot), seconds. */
  time: number;
  /** Rounds run so far, this one included. */
  round: number;
  /** Whether the simulation ended with this round. */
  ended: boolean;
}

/** How a finished simulation ended. */
export interface SimulationResult {
  /** The log, byte-compatible with the reference's `status/log`. */
  log: string;
  /** Set when the simulation aborted (logged as `exit simulation - <msg>` at level err). */
  error?: string;
}

/**
 * A simulated cluster driven round by round (spec §1.4): each {@link step} runs one round (every
 * node's CRM then LRM iteration, 1 s each, nodes in byte order; 20 s per round) followed by its
 * command slot (the next command list at 20, then every 100 s; `delay N` postpones it). The
 * simulation ends at the first slot more than 500 s after the last command, or aborts when a
 * command or daemon fails; either way the log gets its closing line, exactly as `simulate`
 * writes it. Between steps a caller may look ({@link view}) and act ({@link execute},
 * {@link queueCrmCommand}).
 */
export class Simulation {
  private readonly hw: Hardware;
  private readonly lists: string[][];
  private readonly maxTime: number;
  private readonly nodes: ReadonlySet<string>;
  private readonly listeners = new Set<(event: RoundEvent) => void>();
  private readonly balancerListeners = new Set<(event: BalancerEvent) => void>();
  private loopCount = 0;
  private nextCmdAt = 0;
  private lastCommandTime = 0;
  private readonly skip: SkipRounds = { crm: 0, lrm: 0 };
  private rounds = 0;
  private done = false;
  private failure: string | undefined;

  constructor(input: CaseInput, options: SimulationOptions) {
    const onBalancerEvent = (event: BalancerEvent): void => {
      for (const listener of [...this.balancerListeners]) listener(event);
    };
    const seed = options.seed ?? input.simOptions?.seed ?? 0;
    if (!Number.isInteger(seed) || seed < 0 || seed > 2 ** 32 - 1)
      throw new SimError('bad-case', `seed must be an integer from 0 to ${2 ** 32 - 1}, got ${seed}`);
    this.hw = new Hardware(
      input,
      {
        profile: options.profile,
        onBalancerEvent,
        roundModel: options.roundModel,
        ...(options.registry ? { registry: options.registry } : {}),
      },
      options.sink?.bind(options),
      seed,
    );
    this.lists = input.cmdlist.map((l) => [...l]);
    this.maxTime = options.maxTimeSeconds ?? input.simOptions?.maxTime ?? MAX_SIM_TIME;
    this.nodes = new Set(this.hw.nodeNames);
    this.hw.hwLog('info', 'starting simulation');
  }

  /** Simulated time, seconds (the end of the last round). */
  get time(): number {
    return this.hw.curTime;
  }

  /** The round model in force (see {@link SimulationOptions.roundModel}). */
  get roundModel(): RoundModel {
    return this.hw.roundModel;
  }

  /** Where node pressure comes from: the case's commands (`scripted`) or the load pressure model (`load`). */
  get pressureModel(): PressureModelKind {
    return this.hw.loadModel ? 'load' : 'scripted';
  }

  /** Whether the simulation has ended (done or aborted). */
  get ended(): boolean {
    return this.done;
  }

  /** Why the simulation aborted, if it did. */
  get error(): string | undefined {
    return this.failure;
  }

  /** The log so far. */
  log(): string {
    return this.hw.log.text();
  }

  /**
   * Runs one round and its command slot. Returns true while the simulation goes on, false once
   * it has ended (then further calls do nothing). Never throws for failures inside the run:
   * they end the simulation with `err … exit simulation - <msg> `, as the reference does.
   */
  step(): boolean {
    if (this.done) return false;
    try {
      this.hw.runRound(this.skip);
      if (this.skip.crm > 0) this.skip.crm--;
      if (this.skip.lrm > 0) this.skip.lrm--;
      if (this.hw.curTime > this.maxTime) throw new SimError('sim-abort', 'simulation end - time limit reached');
      if (this.commandSlot()) this.finish();
    } catch (err) {
      const msg = err instanceof Error ? err.message : String(err);
      this.failure = msg;
      this.hw.hwLog('err', `exit simulation - ${msg} `);
      this.done = true;
    }
    this.rounds++;
    const event: RoundEvent = { time: this.hw.curTime, round: this.rounds, ended: this.done };
    for (const listener of [...this.listeners]) listener(event);
    return !this.done;
  }

  /** Steps until the simulation ends; returns the log and the abort message, if any. */
  run(): SimulationResult {
    while (this.step()) {
      // one round per step
    }
    return this.failure === undefined ? { log: this.log() } : { log: this.log(), error: this.failure };
  }

  /** Calls `listener` after every step; returns the function that unsubscribes it. */
  onRound(listener: (event: RoundEvent) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  /**
   * Calls `listener` with every motion the balancer queues and every outcome of such a motion
   * (as the manager learns them, during the round); returns the function that unsubscribes it.
   */
  onBalancerEvent(listener: (event: BalancerEvent) => void): () => void {
    this.balancerListeners.add(listener);
    return () => this.balancerListeners.delete(listener);
  }

  /**
   * Every node's measurement now (node byte order): what the next round's manager reads.
   * O(nodes + services); cheaper than {@link view}.
   */
  sample(): ReadonlyMap<string, NodeSample> {
    const hw = this.hw;
    const { nodeInfo } = hw.getNodeInfo();
    const measured = hw.measuredNodeStats();
    const truth = hw.pressureTruth();
    const out = new Map<string, NodeSample>();
    hw.nodeNames.forEach((name, i) => {
      const m = measured[name]!;
      const s: NodeSample = {
        online: !!nodeInfo[name]?.online,
        cpu: m.cpu,
        maxcpu: m.maxcpu,
        mem: m.mem,
        maxmem: m.maxmem,
        pressureCpu: m.pressurecpusome,
        pressureMem: m.pressurememorysome,
      };
      if (truth) {
        s.truthCpu = truth[i]!.cpuShare * 100;
        s.truthMem = truth[i]!.memShare * 100;
      }
      out.set(name, s);
    });
    return out;
  }

  /**
   * The load pressure model's ground truth so far (undefined when pressure is scripted): what
   * guests felt, which nothing in the cluster reports. O(nodes + guests).
   */
  groundTruth(): GroundTruth | undefined {
    const model = this.hw.loadModel;
    if (!model) return undefined;
    return { guests: model.guestTotals(), nodes: model.nodeTotals() };
  }

  /** The load pressure model's stall totals per node so far (undefined when pressure is scripted). O(nodes). */
  nodeContention(): ReadonlyMap<string, NodeContention> | undefined {
    return this.hw.loadModel?.nodeTotals();
  }

  /** Where a configured guest is now: its config node and whether it runs there; undefined for an unknown sid. O(1). */
  guestPlacement(sid: string): { node: string; running: boolean } | undefined {
    const config = this.hw.serviceEntries();
    if (!Object.hasOwn(config, sid)) return undefined;
    const cd = config[sid]!;
    return { node: cd.node, running: this.hw.isRunning(cd.node, sid) };
  }

  /**
   * Runs one cmdlist command now (between rounds, at the current time, logged as
   * `execute <cmd>` like a command of the list) and counts it as the latest command. Throws
   * {@link SimError} `bad-command` for a command the language does not accept, and
   * `command-failed` when it cannot apply (e.g. adding a service that exists); the simulation
   * goes on either way.
   */
  execute(cmd: string): void {
    if (this.done) throw new SimError('command-failed', 'the simulation has ended');
    const command = parseCommandOrThrow(cmd, this.nodes);
    this.lastCommandTime = this.hw.curTime;
    this.apply(command, cmd);
  }

  /**
   * Queues a command for the CRM master, as `ha-manager` would (`migrate vm:101 node2`,
   * `stop vm:101 0`, `enable-node-maintenance node1`, ...); the master reads it in its next
   * round and logs what it did with it (or `unable to parse crm command`).
   */
  queueCrmCommand(cmd: string): void {
    this.hw.queueCrmCommands(cmd);
  }

  /** A read-only picture of the cluster now. O(nodes + services). */
  view(): ClusterView {
    const hw = this.hw;
    const { nodeInfo } = hw.getNodeInfo();
    const nodes = new Map<string, NodeView>();
    for (const name of hw.nodeNames) {
      const d = hw.nodeHardware(name)!;
      nodes.set(
        name,
        Object.freeze({
          power: d.power as 'on' | 'off',
          network: d.network as 'on' | 'off',
          online: !!nodeInfo[name]?.online,
          maxcpu: d.maxcpu,
          maxmem: d.maxmem,
        }),
      );
    }
    const measured = hw.measuredNodeStats();
    const nodeStats = new Map<string, Readonly<DynamicNodeStats>>();
    for (const name of hw.nodeNames) nodeStats.set(name, Object.freeze(measured[name]!));
    const config = hw.serviceEntries();
    const staticStats = hw.staticStatsSnapshot();
    const dynamicStats = hw.dynamicStatsSnapshot();
    const services = new Map<string, ServiceView>();
    for (const sid of Object.keys(config).sort(compareNames)) {
      const cd = config[sid]!;
      services.set(
        sid,
        Object.freeze({
          node: cd.node,
          state: cd.state,
          running: hw.isRunning(cd.node, sid),
          staticStats: Object.hasOwn(staticStats, sid) ? staticStats[sid] : undefined,
          dynamicStats: Object.hasOwn(dynamicStats, sid) ? dynamicStats[sid] : undefined,
          lock: hw.serviceLock(sid),
        }),
      );
    }
    const lrmModes = new Map<string, string>();
    for (const [node, st] of hw.lrmStatuses()) if (typeof st.mode === 'string') lrmModes.set(node, st.mode);
    return Object.freeze({
      time: hw.curTime,
      nodes,
      nodeStats,
      services,
      managerStatus: hw.readManagerStatus(),
      lrmModes: new Map([...lrmModes].sort(([a], [b]) => compareNames(a, b))),
    });
  }

  /** The command slot at the end of a round; true when the simulation ends here. */
  private commandSlot(): boolean {
    const hw = this.hw;
    if (hw.curTime < this.nextCmdAt) return false; // the slot counter does not advance
    if (this.loopCount % 5 === 0) {
      const list = this.lists.shift();
      if (!list) {
        if (hw.curTime - this.lastCommandTime > 500) return true;
      } else {
        for (const cmd of list) {
          this.lastCommandTime = hw.curTime;
          const parsed = parseCommand(cmd, this.nodes);
          if (!parsed.ok) throw new SimError('bad-command', `invalid command '${cmd}': ${parsed.problem}`);
          this.apply(parsed.command, cmd);
        }
      }
    }
    this.loopCount++;
    return false;
  }

  private apply(command: Command, text: string): void {
    const hw = this.hw;
    if (command.kind === 'delay') {
      hw.hwLog('info', `execute ${text}`, 'cmdlist');
      this.nextCmdAt = hw.curTime + command.seconds;
    } else if (command.kind === 'skip-round') {
      hw.hwLog('info', `execute ${text}`, 'cmdlist');
      this.skip[command.daemon] += command.rounds;
    } else {
      hw.execute(command, text, 'cmdlist');
    }
  }

  private finish(): void {
    this.hw.hwLog('info', 'exit simulation - done');
    this.done = true;
  }
}
