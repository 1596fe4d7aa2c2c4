/**
 * `poise-sim serve`: a simulated cluster behind the Proxmox VE API. The case runs in the
 * embedded simulator (`@poise/sim`'s `Simulation`, profile pve-9.2), one 20 s HA round every
 * `20 / speed` real seconds; an HTTPS server (`@poise/pve-api/server`'s fake `pveproxy`: API
 * token check, 401 otherwise, 501 for paths it does not serve) answers the endpoints a
 * balancing daemon uses from the simulation's view (`served-view.ts` → `clusterReadRoutes`).
 * HA migrate/relocate POSTs queue a command for the simulated CRM and return at once, as on a
 * real cluster; the guest migrate POST of an HA guest starts an `hamigrate` task that ends as
 * soon as the command is queued.
 */
import { readFileSync } from 'node:fs';
import { X509Certificate } from 'node:crypto';
import { basename, resolve } from 'node:path';
import { ApiToken, readTokenFile } from '@poise/pve-api';
import {
  clusterReadRoutes,
  type FakeHandler,
  type FakePveServer,
  type FakeReply,
  generateCertificates,
  haMotionBlockedReply,
  haMotionRefusal,
  haMotionReply,
  type ServedCluster,
  startFakePveServer,
  vmidOfSid,
} from '@poise/pve-api/server';
import { type CaseInput, type ClusterView, loadCase, Simulation } from '@poise/sim';
import { judgeHaMotion, resolveSid, servedCaseFacts, servedCluster } from './served-view';

/** The PVE version served unless asked otherwise: a 9.2 cluster (rules, memhost, PSI, percent crs units). */
export const DEFAULT_SERVED_VERSION = '9.2.2';
/** Default time acceleration: one 20 s round every 2 s. */
export const DEFAULT_SPEED = 10;
/** The cluster's clock when it is stepped by hand: simulated second 0 is 2026-01-01T00:00:00Z. */
const STEPPED_EPOCH_SECONDS = 1_767_225_600;
/** Tasks kept for `GET …/tasks` (the oldest are forgotten). */
const MAX_TASKS = 1000;

/** Why `poise-sim serve` cannot start: a message naming the option or file. */
export class ServeError extends Error {
  override readonly name = 'ServeError';
  constructor(
    readonly code: 'bad-option' | 'bad-case' | 'bad-token' | 'bad-certificate' | 'listen',
    message: string,
    options?: { cause?: unknown },
  ) {
    super(message, options);
  }
}

/** Options of {@link startSimServe}. */
export interface SimServeOptions {
  readonly caseDir: string;
  /** Listen port (0: any free one). */
  readonly port: number;
  /** Listen address (default 127.0.0.1). */
  readonly host?: string;
  /** Simulated seconds per real second (> 0; default {@link DEFAULT_SPEED}). */
  readonly speed?: number;
  /** Accepted API tokens, `USER@REALM!TOKENID=SECRET`, already read (see {@link readServeToken}). */
  readonly tokens: readonly ApiToken[];
  /** Certificate and key (PEM) to serve; default: a self-signed pair generated for this run. */
  readonly tls?: { readonly cert: string; readonly key: string };
  /** `/version` (default {@link DEFAULT_SERVED_VERSION}; `8.4.1` serves a PVE 8 API). */
  readonly version?: string;
  /** `crs` on the wire: a property string (default) or an object. */
  readonly crsAs?: 'string' | 'object';
  /** One line of what happens (start, every HA state change, every POST, the end). */
  readonly out: (line: string) => void;
  /** Wall clock, epoch seconds (tests; default the wall clock, or the simulation's when `manual`). */
  readonly now?: () => number;
  /**
   * No timer: the simulation advances only by {@link SimServe.step} (`poise-sim serve --step`:
   * a line on standard input), and the cluster's clock is the simulation's,
   * {@link STEPPED_EPOCH_SECONDS} + simulated seconds, unless `now` is given.
   */
  readonly manual?: boolean;
}

/** A running `poise-sim serve`. */
export interface SimServe {
  readonly url: string;
  /** The case's name (its directory's). */
  readonly caseName: string;
  /** SHA-256 fingerprint of the served certificate, `AB:CD:…` (what a client pins). */
  readonly fingerprint: string;
  readonly sim: Simulation;
  /** The HA and guest migrate POSTs received, in order (`POST /cluster/ha/resources/vm:101/migrate node=node2`; the last {@link MAX_TASKS}). */
  posts(): readonly string[];
  /** Runs one simulated round now (what the timer does every `20 / speed` s); false once the scenario ended. */
  step(): boolean;
  /** Stops the clock and the server. */
  close(): Promise<void>;
}

/** Reads the token of `--token` or `--token-file` (never echoed in a message). */
export function readServeToken(option: { token?: string; tokenFile?: string }): ApiToken {
  try {
    if (option.token !== undefined) return ApiToken.parse(option.token, "'--token'");
    if (option.tokenFile !== undefined) return readTokenFile(option.tokenFile);
  } catch (err) {
    throw new ServeError('bad-token', err instanceof Error ? err.message : String(err), { cause: err });
  }
  throw new ServeError(
    'bad-token',
    "an API token is needed: '--token USER@REALM!TOKENID=SECRET' or '--token-file <file>'",
  );
}

/** Reads `--cert`/`--key`, checking that they are a PEM certificate and key. */
export function readCertificate(certFile: string, keyFile: string): { cert: string; key: string } {
  const read = (path: string, what: string) => {
    try {
      return readFileSync(path, 'utf8');
    } catch (err) {
      throw new ServeError(
        'bad-certificate',
        `${what} '${path}' cannot be read (${(err as NodeJS.ErrnoException).code ?? 'error'})`,
        { cause: err },
      );
    }
  };
  const cert = read(certFile, "'--cert'");
  const key = read(keyFile, "'--key'");
  try {
    new X509Certificate(cert);
  } catch (err) {
    throw new ServeError('bad-certificate', `'--cert' '${certFile}' holds no PEM certificate`, { cause: err });
  }
  if (!/-----BEGIN [A-Z ]*PRIVATE KEY-----/.test(key))
    throw new ServeError('bad-certificate', `'--key' '${keyFile}' holds no PEM private key`);
  return { cert, key };
}

/** Simulated seconds as `sim 00:01:20`. */
export function simClock(seconds: number): string {
  const t = Math.max(0, Math.round(seconds));
  const two = (n: number) => String(n).padStart(2, '0');
  return `sim ${two(Math.floor(t / 3600))}:${two(Math.floor(t / 60) % 60)}:${two(t % 60)}`;
}

interface Task {
  readonly upid: string;
  readonly node: string;
  readonly vmid: number;
  readonly type: string;
  readonly starttime: number;
}

/** `UPID:<node>:<pid>:<pstart>:<starttime>:<type>:<id>:<user>:` as pvedaemon writes it. */
function upid(node: string, pid: number, starttime: number, type: string, id: number, user: string): string {
  const hex = (n: number) => n.toString(16).toUpperCase().padStart(8, '0');
  return `UPID:${node}:${hex(pid)}:${hex(pid * 7)}:${hex(starttime)}:${type}:${id}:${user}:`;
}

/** One line per HA change between two views: `vm:101: migrate node1 → node2 (was started on node1)`. */
function haChanges(before: ClusterView | undefined, after: ClusterView): string[] {
  const a = before?.managerStatus.service_status ?? {};
  const b = after.managerStatus.service_status ?? {};
  const where = (e: { state: string; node: string; target?: string }) =>
    e.target !== undefined ? `${e.state} ${e.node} → ${e.target}` : `${e.state} on ${e.node}`;
  const out: string[] = [];
  for (const sid of Object.keys(b).sort()) {
    const now = b[sid]!;
    const old = Object.hasOwn(a, sid) ? a[sid] : undefined;
    if (old && old.state === now.state && old.node === now.node && old.target === now.target) continue;
    out.push(`${sid}: ${where(now)}${old ? ` (was ${where(old)})` : ''}`);
  }
  return out;
}

/**
 * Starts `poise-sim serve`: loads the case (a {@link ServeError} `bad-case` naming the file and
 * field), starts the simulation clock and the HTTPS server, and writes the start lines (the
 * URL, the certificate's SHA-256 fingerprint to pin, the token id — never its secret).
 */
export async function startSimServe(options: SimServeOptions): Promise<SimServe> {
  const speed = options.speed ?? DEFAULT_SPEED;
  if (!(Number.isFinite(speed) && speed > 0))
    throw new ServeError(
      'bad-option',
      `'--speed' must be a number > 0 (simulated seconds per real second), got ${speed}`,
    );
  if (options.tokens.length === 0) throw new ServeError('bad-token', 'an API token is needed');
  let input: CaseInput;
  try {
    input = loadCase(options.caseDir, basename(resolve(options.caseDir)));
  } catch (err) {
    throw new ServeError('bad-case', err instanceof Error ? err.message : String(err), { cause: err });
  }
  for (const w of input.warnings ?? []) options.out(`warning: ${w}`);
  const version = options.version ?? DEFAULT_SERVED_VERSION;
  const facts = servedCaseFacts(input, version);
  const sim = new Simulation(input, { profile: 'pve-9.2' });
  const now = options.now ?? (options.manual ? () => STEPPED_EPOCH_SECONDS + sim.time : () => Date.now() / 1000);
  const out = options.out;
  const say = (line: string) => out(`${simClock(sim.time)}  ${line}`);

  let view = sim.view();
  let cache: { at: number; cluster: Omit<ServedCluster, 'time'> } | undefined;
  const served = (): ServedCluster => {
    if (cache?.at !== sim.time) cache = { at: sim.time, cluster: servedCluster(view, facts, 0) };
    return { ...cache.cluster, time: now(), ...(options.crsAs ? { crsAs: options.crsAs } : {}) };
  };
  const posts: string[] = [];
  const post = (line: string) => {
    posts.push(line);
    if (posts.length > MAX_TASKS) posts.shift();
  };
  const context: ServeContext = { sim, facts, view: () => view, served, now, say, post };

  const tls = options.tls ?? (await selfSignedCertificate(options.host));
  let server: FakePveServer;
  try {
    server = await startFakePveServer({
      tls: { cert: tls.cert, key: tls.key },
      tokens: options.tokens.map((t) => t.authorizationHeader().slice('PVEAPIToken='.length)),
      host: options.host ?? '127.0.0.1',
      port: options.port,
      record: false,
      routes: { ...clusterReadRoutes(served), ...motionRoutes(context) },
    });
  } catch (err) {
    throw new ServeError(
      'listen',
      `cannot listen on ${options.host ?? '127.0.0.1'}:${options.port} (${(err as NodeJS.ErrnoException).code ?? String(err)})`,
      { cause: err },
    );
  }
  const fingerprint = new X509Certificate(tls.cert).fingerprint256;
  writeStartLines(options, input, { version, url: server.url, fingerprint, speed, notes: facts.notes });

  let timer: NodeJS.Timeout | undefined;
  let stopped = false;
  /** One round; false once the scenario ended. */
  const step = (): boolean => {
    if (sim.ended) return false;
    const old = view;
    sim.step();
    view = sim.view();
    for (const line of haChanges(old, view)) say(line);
    if (sim.ended) {
      say(
        sim.error === undefined
          ? `the scenario ended at ${sim.time} s; serving its last state until stopped`
          : `the simulation aborted at ${sim.time} s: ${sim.error}; serving its last state until stopped`,
      );
    }
    return !sim.ended;
  };
  const tick = () => {
    if (stopped) return;
    const before = sim.time;
    if (step()) timer = setTimeout(tick, ((sim.time - before) / speed) * 1000);
  };
  if (!options.manual) timer = setTimeout(tick, (20 / speed) * 1000);

  return {
    url: server.url,
    caseName: input.name,
    fingerprint,
    sim,
    posts: () => [...posts],
    step,
    close: async () => {
      stopped = true;
      clearTimeout(timer);
      await server.close();
    },
  };
}

/** A self-signed certificate and key for this run (for `host` too, when it is a name or a specific address). */
async function selfSignedCertificate(host: string | undefined): Promise<{ cert: string; key: string }> {
  const generated = await generateCertificates({
    hosts: host && host !== '127.0.0.1' && host !== '0.0.0.0' ? [host] : [],
  });
  return { cert: generated.certPem, key: generated.keyPem };
}

/** What the served endpoints share: the simulation, its current view and what they report. */
interface ServeContext {
  readonly sim: Simulation;
  readonly facts: ReturnType<typeof servedCaseFacts>;
  /** The simulation's view after its last round. */
  readonly view: () => ClusterView;
  /** The cluster as the read endpoints serve it now. */
  readonly served: () => ServedCluster;
  /** Wall clock, epoch seconds (the cluster's). */
  readonly now: () => number;
  /** Writes a line of what happens, stamped with the simulated time. */
  readonly say: (line: string) => void;
  /** Records a POST received (see `SimServe.posts`). */
  readonly post: (line: string) => void;
}

/**
 * The endpoints that move guests, and the tasks they start: HA migrate/relocate queue a command
 * for the simulated CRM; the guest migrate of an HA guest starts an `hamigrate` task that ends
 * as soon as the command is queued (or refused).
 */
function motionRoutes(context: ServeContext): Record<string, FakeHandler> {
  const { sim, facts, served, now, say, post } = context;
  const tasks: Task[] = [];
  const exits = new Map<string, string>();
  let pid = 4242;
  const haMotion =
    (kind: 'migrate' | 'relocate'): FakeHandler =>
    (req) => {
      const sid = resolveSid(context.view(), req.params.sid!);
      const node = req.form.get('node');
      post(`POST /cluster/ha/resources/${req.params.sid}/${kind} node=${node ?? ''}`);
      if (node === null || node === '')
        return {
          status: 400,
          statusText: 'Parameter verification failed.',
          data: { node: 'property is missing and it is not optional' },
        };
      // what the endpoint refuses before queueing (no such node, not HA, in error): a 500 with the handler's message
      const refusal = haMotionRefusal(served(), sid, node);
      if (refusal) {
        say(`POST ${kind} ${sid} to ${node}: refused (${refusal.statusText})`);
        return refusal;
      }
      const verdict = judgeHaMotion(context.view(), facts.compiled, sid, node);
      if (verdict.kind === 'unknown' || verdict.kind === 'error') {
        say(`POST ${kind} ${sid} to ${node}: refused (${verdict.message})`);
        return { status: 500, statusText: verdict.message };
      }
      if (verdict.kind === 'blocked') {
        say(
          `POST ${kind} ${sid} to ${node}: blocked by ${verdict.blocking.join(', ')} (negative affinity); nothing queued`,
        );
        return haMotionBlockedReply(served(), sid, node, verdict.blocking);
      }
      sim.queueCrmCommand(`${kind} ${sid} ${node}`);
      const along = verdict.comigrated.length > 0 ? ` (with ${verdict.comigrated.join(', ')})` : '';
      say(`POST ${kind} ${sid} to ${node}${along}: queued for the CRM's next round`);
      return haMotionReply(served(), sid, node, verdict.comigrated);
    };
  const guestMotion: FakeHandler = (req) => {
    const vmid = Number(req.params.vmid);
    const view = context.view();
    const sid = [...view.services.keys()].find((s) => vmidOfSid(s) === vmid);
    const target = req.form.get('target');
    post(`POST /nodes/${req.params.node}/${req.params.type}/${req.params.vmid}/migrate target=${target ?? ''}`);
    const guest = sid === undefined ? undefined : served().guests.find((g) => g.sid === sid);
    if (sid === undefined || guest === undefined || guest.node !== req.params.node) {
      return {
        status: 500,
        statusText: `Configuration file 'nodes/${req.params.node}/${req.params.type === 'lxc' ? 'lxc' : 'qemu-server'}/${req.params.vmid}.conf' does not exist`,
      };
    }
    if (target === null || target === '')
      return {
        status: 400,
        statusText: 'Parameter verification failed.',
        data: { target: 'property is missing and it is not optional' },
      };
    if (!view.nodes.has(target)) return { status: 500, statusText: `no such cluster node '${target}'` };
    // an HA guest: the endpoint forks 'ha-manager migrate', which only queues the command
    const verdict = judgeHaMotion(view, facts.compiled, sid, target);
    if (verdict.kind === 'queue') sim.queueCrmCommand(`migrate ${sid} ${target}`);
    const task: Task = {
      upid: upid(req.params.node, ++pid, Math.floor(now()), 'hamigrate', vmid, 'root@pam'),
      node: req.params.node,
      vmid,
      type: 'hamigrate',
      starttime: Math.floor(now()),
    };
    tasks.push(task);
    if (tasks.length > MAX_TASKS) exits.delete(tasks.shift()!.upid);
    say(
      `POST guest migrate ${sid} to ${target}: hamigrate task ${verdict.kind === 'queue' ? "queued the command for the CRM's next round" : `failed (${verdict.kind === 'blocked' ? `blocked by ${verdict.blocking.join(', ')}` : verdict.message})`}`,
    );
    exits.set(task.upid, verdict.kind === 'queue' ? 'OK' : 'command failed: blocked or refused');
    return { data: task.upid };
  };
  const taskStatus: FakeHandler = (req): FakeReply => {
    const task = tasks.find((t) => t.upid === req.params.upid);
    if (!task) return { status: 500, statusText: `unable to find task '${req.params.upid}'` };
    return {
      data: {
        upid: task.upid,
        node: task.node,
        pid: 0,
        pstart: 0,
        starttime: task.starttime,
        type: task.type,
        id: String(task.vmid),
        user: 'root@pam',
        status: 'stopped',
        exitstatus: exits.get(task.upid) ?? 'OK',
      },
    };
  };
  const taskList: FakeHandler = (req) => {
    const vmid = req.query.get('vmid');
    const type = req.query.get('typefilter');
    const data = tasks
      .filter(
        (t) =>
          t.node === req.params.node &&
          (vmid === null || String(t.vmid) === vmid) &&
          (type === null || t.type === type),
      )
      .map((t) => ({
        upid: t.upid,
        node: t.node,
        type: t.type,
        id: String(t.vmid),
        user: 'root@pam',
        starttime: t.starttime,
        endtime: t.starttime,
        status: exits.get(t.upid) ?? 'OK',
      }));
    return { data };
  };

  return {
    'POST /cluster/ha/resources/{sid}/migrate': haMotion('migrate'),
    'POST /cluster/ha/resources/{sid}/relocate': haMotion('relocate'),
    'POST /nodes/{node}/{type}/{vmid}/migrate': guestMotion,
    'GET /nodes/{node}/tasks/{upid}/status': taskStatus,
    'GET /nodes/{node}/tasks': taskList,
  };
}

/** The start lines: the case and URL, the certificate and its fingerprint, the token ids, the clock. */
function writeStartLines(
  options: SimServeOptions,
  input: CaseInput,
  started: { version: string; url: string; fingerprint: string; speed: number; notes: readonly string[] },
): void {
  const { out } = options;
  const { version, fingerprint, speed } = started;
  const nodes = Object.keys(input.hardwareStatus).length;
  const services = Object.keys(input.serviceConfig).length;
  out(
    `poise-sim serve: case '${input.name}' (${nodes} nodes, ${services} HA resources) as a Proxmox VE ${version} API on ${started.url}/api2/json`,
  );
  out(
    `TLS certificate: ${options.tls ? 'from --cert/--key' : 'self-signed, generated for this run (--cert/--key to serve your own)'}; pin its fingerprint (poise-manager: pve.tls.fingerprint)`,
  );
  out(`fingerprint (SHA-256): ${fingerprint}`);
  const several = options.tokens.length > 1;
  out(
    `API token${several ? 's' : ''}: ${options.tokens.map((t) => t.tokenId).join(', ')} (a request without ${several ? 'one of them' : 'it'} or with another gets 401; the secret is not printed)`,
  );
  out(
    options.manual
      ? `time: stepped by hand (each step one 20 s HA round; the cluster's clock is the simulation's, ${new Date(STEPPED_EPOCH_SECONDS * 1000).toISOString()} + simulated seconds); the simulation ends with its scenario, then its last state is served until stopped`
      : `time: one 20 s HA round every ${Number((20 / speed).toFixed(3))} s (--speed ${speed}); the simulation ends with its scenario, then its last state is served until stopped`,
  );
  for (const note of started.notes) out(`warning: ${note}`);
}
