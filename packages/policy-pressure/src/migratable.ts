import {
  type BalanceCandidate,
  type BalanceContext,
  type GuestConfig,
  type MigratabilityVerdict,
  type MigrationBlocker,
  type NoticeInit,
  PolicyError,
  type Stage,
  compareNames,
  formatList,
  invalidInput,
  missingContext,
  showValue,
  stateCheck,
} from '@poise/policy';

/** Which guest type a configuration belongs to: QEMU VM (live migration) or container (restart migration). */
export type GuestKind = 'vm' | 'ct';

/** Options of {@link judgeMigratability}. */
export interface JudgeOptions {
  /** Default: `ct` when the config has `rootfs`, else `vm`. */
  readonly kind?: GuestKind;
  /**
   * Whether a storage id is shared across nodes (`storage.cfg` `shared`); `undefined` =
   * unknown. Default and for unknown ids: `local` and `local-*` are local, anything else is
   * shared (PVE's default local storages; a host that knows storage.cfg should pass it).
   */
  readonly sharedStorage?: ((storage: string) => boolean | undefined) | undefined;
}

/** True when `storage` counts as local (not shared) under {@link JudgeOptions.sharedStorage}. */
function isLocalStorage(storage: string, sharedStorage?: JudgeOptions['sharedStorage']): boolean {
  const known = sharedStorage?.(storage);
  if (known !== undefined) return !known;
  return storage === 'local' || storage.startsWith('local-');
}

/**
 * Splits a PVE property string (`local:iso/d.iso,media=cdrom`) into its keys; the first item
 * without `=` belongs to `defaultKey`.
 */
export function parsePropertyString(value: string, defaultKey: string): Map<string, string> {
  const out = new Map<string, string>();
  for (const item of value.split(',')) {
    if (item === '') continue;
    const eq = item.indexOf('=');
    if (eq < 0) {
      if (!out.has(defaultKey)) out.set(defaultKey, item);
    } else {
      out.set(item.slice(0, eq), item.slice(eq + 1));
    }
  }
  return out;
}

type Volume =
  | { kind: 'none' }
  | { kind: 'host-cdrom' }
  | { kind: 'path'; path: string }
  | { kind: 'storage'; storage: string; name: string }
  | { kind: 'unknown'; value: string };

function volumeOf(spec: string | undefined): Volume {
  if (spec === undefined || spec === '' || spec === 'none') return { kind: 'none' };
  if (spec === 'cdrom') return { kind: 'host-cdrom' };
  if (spec.startsWith('/')) return { kind: 'path', path: spec };
  const colon = spec.indexOf(':');
  if (colon > 0) return { kind: 'storage', storage: spec.slice(0, colon), name: spec.slice(colon + 1) };
  return { kind: 'unknown', value: spec };
}

/** A cloud-init drive (`vm-100-cloudinit`) is regenerated on the target, whatever its storage. */
const CLOUDINIT = /(^|\/)vm-\d+-cloudinit(\.[a-z0-9]+)?$/;
const DRIVE = /^(ide|sata|scsi|virtio)\d+$|^efidisk0$|^tpmstate0$|^unused\d+$/;
const truthy = (v: string | undefined) => v === '1' || v === 'on' || v === 'yes' || v === 'true';

/**
 * Whether a guest can be moved by the balancer, judged from its configuration alone (pure).
 * VM (live migration) blockers, one per key:
 *
 * - `local-cdrom`: a cd-rom (`media=cdrom`) whose image is on local storage or a host path
 *   (`ide2: local:iso/d.iso,media=cdrom`); `none`, a cd-rom on shared storage and a cloud-init
 *   drive (regenerated on the target) are fine; `host-cdrom`: the host's drive (`cdrom`);
 * - `local-disk`: a disk (`ideN`, `sataN`, `scsiN`, `virtioN`, `efidisk0`, `tpmstate0`,
 *   `unusedN`) on local storage or a host path, unless marked `shared=1`;
 * - `pci-passthrough` (`hostpciN`, mapped devices included: their live-migration capability is
 *   not in the guest config), `usb-passthrough` (`usbN` other than `spice`),
 *   `serial-device` (`serialN` other than `socket`), `parallel-device` (`parallelN`),
 *   `virtiofs` (`virtiofsN`), `amd-sev`, `intel-tdx`.
 *
 * Container (restart migration: local volumes are copied) blockers: `bind-mount` (`rootfs`
 * or `mpN` on a host path, unless `shared=1`), `device-passthrough` (`devN`). Keys are judged
 * in byte order. Never throws; a value that is not a string is read as its string form.
 */
export function judgeMigratability(config: GuestConfig, options: JudgeOptions = {}): MigratabilityVerdict {
  const keys = Object.keys(config).sort(compareNames);
  const kind = options.kind ?? (Object.hasOwn(config, 'rootfs') ? 'ct' : 'vm');
  const blockers: MigrationBlocker[] = [];
  const block = (key: string, code: string, what: string) => blockers.push({ key, code, message: `${what} (${key})` });
  const local = (storage: string) => isLocalStorage(storage, options.sharedStorage);
  for (const key of keys) {
    const raw = config[key];
    if (raw === undefined || raw === null) continue;
    const value = String(raw);
    if (kind === 'ct') {
      if (key === 'rootfs' || /^mp\d+$/.test(key)) {
        const opts = parsePropertyString(value, 'volume');
        const volume = volumeOf(opts.get('volume'));
        if (volume.kind === 'path' && !truthy(opts.get('shared')))
          block(key, 'bind-mount', `bind mount of host path '${volume.path}'`);
      } else if (/^dev\d+$/.test(key)) {
        block(
          key,
          'device-passthrough',
          `device passthrough '${parsePropertyString(value, 'path').get('path') ?? value}'`,
        );
      }
      continue;
    }
    if (DRIVE.test(key)) {
      const opts = parsePropertyString(value, 'file');
      const volume = volumeOf(opts.get('file'));
      const shared = truthy(opts.get('shared'));
      if (opts.get('media') === 'cdrom') {
        if (volume.kind === 'host-cdrom') block(key, 'host-cdrom', "the host's cd-rom drive");
        else if (volume.kind === 'path' && !shared) block(key, 'local-cdrom', `local cd-rom image '${volume.path}'`);
        else if (volume.kind === 'storage' && !shared && !CLOUDINIT.test(volume.name) && local(volume.storage)) {
          block(key, 'local-cdrom', `local cd-rom image '${volume.storage}:${volume.name}'`);
        } else if (volume.kind === 'unknown')
          block(key, 'local-cdrom', `cd-rom image '${volume.value}' of unknown location`);
      } else if (volume.kind === 'path' && !shared) {
        block(key, 'local-disk', `host block device or file '${volume.path}'`);
      } else if (volume.kind === 'storage' && !shared && !CLOUDINIT.test(volume.name) && local(volume.storage)) {
        block(key, 'local-disk', `local disk '${volume.storage}:${volume.name}'`);
      } else if (volume.kind === 'unknown' || volume.kind === 'host-cdrom') {
        block(key, 'local-disk', `disk '${opts.get('file')}' of unknown location`);
      }
    } else if (/^hostpci\d+$/.test(key)) {
      const opts = parsePropertyString(value, 'host');
      const device = opts.get('mapping') !== undefined ? `mapping=${opts.get('mapping')}` : (opts.get('host') ?? value);
      block(key, 'pci-passthrough', `pci passthrough '${device}'`);
    } else if (/^usb\d+$/.test(key)) {
      const opts = parsePropertyString(value, 'host');
      if (opts.get('host') !== 'spice') {
        const device =
          opts.get('mapping') !== undefined ? `mapping=${opts.get('mapping')}` : (opts.get('host') ?? value);
        block(key, 'usb-passthrough', `usb passthrough '${device}'`);
      }
    } else if (/^serial\d+$/.test(key)) {
      if (value !== 'socket') block(key, 'serial-device', `serial port on host device '${value}'`);
    } else if (/^parallel\d+$/.test(key)) {
      block(key, 'parallel-device', `parallel port on host device '${value}'`);
    } else if (/^virtiofs\d+$/.test(key)) {
      block(key, 'virtiofs', `virtiofs directory '${parsePropertyString(value, 'dirid').get('dirid') ?? value}'`);
    } else if (key === 'amd-sev') {
      block(key, 'amd-sev', 'amd sev memory encryption');
    } else if (key === 'intel-tdx') {
      block(key, 'intel-tdx', 'intel tdx trust domain');
    }
  }
  return { migratable: blockers.length === 0, blockers };
}

/** A guest reported as not movable (or without configuration), remembered so it is reported once. */
interface ReportedGuest {
  readonly sid: string;
  /** What was reported: the blockers' codes and keys, or `unknown`. A change is reported again. */
  readonly key: string;
  /** Seconds: when the guest was last judged. */
  readonly at: number;
}

/** State of {@link migratableFilter}. */
export interface MigratableState {
  /** Sorted by sid. */
  readonly reported: readonly ReportedGuest[];
}

/** A reported guest not judged for this long is forgotten (seconds, 24 h); if it shows up again it is reported again. */
const REPORT_FORGET_SECONDS = 86_400;

function checkVerdict(value: unknown, sid: string): MigratabilityVerdict | undefined {
  if (value === undefined) return undefined;
  if (
    typeof value !== 'object' ||
    value === null ||
    !('migratable' in value) ||
    typeof value.migratable !== 'boolean' ||
    !('blockers' in value) ||
    !Array.isArray(value.blockers)
  ) {
    throw invalidInput(
      `the host's migratability verdict for '${sid}' must be { migratable: boolean, blockers: [] }, got ${showValue(value)}`,
    );
  }
  for (const [i, b] of (value.blockers as unknown[]).entries()) {
    if (
      typeof b !== 'object' ||
      b === null ||
      !('key' in b && typeof b.key === 'string') ||
      !('code' in b && typeof b.code === 'string') ||
      !('message' in b && typeof b.message === 'string')
    ) {
      throw invalidInput(
        `the host's migratability verdict for '${sid}': blockers.${i} must be { key, code, message } strings`,
      );
    }
  }
  return value as MigratabilityVerdict;
}

/**
 * Guests whose configuration prevents a migration are not candidates (name `migratable`, a
 * filter): a bundle with any such member is dropped. The verdict is the host's
 * (`ctx.migratability(sid)`) when it has one, else {@link judgeMigratability} of
 * `ctx.guestConfig(sid)` with `ctx.sharedStorage`; a guest whose sid starts with `ct:` is
 * judged as a container. Each guest's blockers are reported once (a `not-migratable` warning
 * notice, e.g. `vm:101 cannot be migrated: local cd-rom image 'local:iso/d.iso' (ide2)`), and
 * again only when they change; a guest without configuration is treated as migratable and
 * reported once (`config-unknown`). Stops with code `not-migratable` when nothing is left,
 * e.g. `not migratable: vm:101 (local cd-rom image 'local:iso/d.iso' (ide2))`. Needs
 * `ctx.migratability()` or `ctx.guestConfig()`.
 */
export function migratableFilter(): Stage<MigratableState> {
  const check = stateCheck('migratable');
  return {
    name: 'migratable',
    kind: 'filter',
    initialState: () => ({ reported: [] }),
    validateState: (value) => {
      const seen = new Set<string>();
      return {
        reported: check.array(check.object(value, '').reported, 'reported').map((v, i) => {
          const e = check.object(v, `reported.${i}`);
          const sid = check.string(e.sid, `reported.${i}.sid`);
          if (seen.has(sid))
            throw new PolicyError(
              'invalid-state',
              `stage 'migratable': state field 'reported.${i}.sid' lists '${sid}' twice`,
            );
          seen.add(sid);
          return { sid, key: check.string(e.key, `reported.${i}.key`), at: check.number(e.at, `reported.${i}.at`) };
        }),
      };
    },
    run: (ctx, plan, state) => {
      if (!ctx.migratability && !ctx.guestConfig) throw missingContext('migratable', 'guestConfig()');
      const verdicts = new Map<string, MigratabilityVerdict | undefined>();
      const verdictOf = (sid: string) => {
        if (!verdicts.has(sid)) verdicts.set(sid, judge(ctx, sid));
        return verdicts.get(sid);
      };
      const kept: BalanceCandidate[] = [];
      const reasons: string[] = [];
      for (const c of plan.candidates ?? []) {
        const blocked = c.resources.filter((sid) => verdictOf(sid)?.migratable === false);
        if (blocked.length === 0) kept.push(c);
        else
          for (const sid of blocked)
            reasons.push(
              `${sid} (${verdictOf(sid)!
                .blockers.map((b) => b.message)
                .join('; ')})`,
            );
      }
      const { next, notices } = remember(state, verdicts, ctx.now);
      if (kept.length === 0 && reasons.length > 0) {
        const stop = `not migratable: ${formatList(reasons)}`;
        return { stop, code: 'not-migratable', key: `migratable:${stop}`, state: next, notices };
      }
      return { plan: { ...plan, candidates: kept }, state: next, notices };
    },
  };
}

function judge(ctx: BalanceContext, sid: string): MigratabilityVerdict | undefined {
  const fromHost = ctx.migratability ? checkVerdict(ctx.migratability(sid), sid) : undefined;
  if (fromHost) return fromHost;
  const config = ctx.guestConfig?.(sid);
  if (config === undefined) return undefined;
  if (typeof config !== 'object' || config === null || Array.isArray(config)) {
    throw invalidInput(`the configuration of '${sid}' must be an object, got ${showValue(config)}`);
  }
  return judgeMigratability(config, {
    kind: sid.startsWith('ct:') ? 'ct' : 'vm',
    sharedStorage: ctx.sharedStorage?.bind(ctx),
  });
}

/** Updates the reported guests; a notice for each guest whose report is new or changed. */
function remember(
  state: MigratableState,
  verdicts: ReadonlyMap<string, MigratabilityVerdict | undefined>,
  now: number,
) {
  const reported = new Map(state.reported.map((r) => [r.sid, r]));
  const notices: NoticeInit[] = [];
  for (const [sid, verdict] of [...verdicts].sort((a, b) => compareNames(a[0], b[0]))) {
    if (verdict?.migratable) {
      reported.delete(sid);
      continue;
    }
    const key = verdict ? verdict.blockers.map((b) => `${b.code}:${b.key}`).join(',') : 'unknown';
    if (reported.get(sid)?.key !== key) {
      notices.push(
        verdict
          ? {
              code: 'not-migratable',
              severity: 'warning',
              message: `${sid} cannot be migrated: ${verdict.blockers.map((b) => b.message).join('; ')}`,
            }
          : { code: 'config-unknown', severity: 'info', message: `no configuration for ${sid}: treated as migratable` },
      );
    }
    reported.set(sid, { sid, key, at: now });
  }
  for (const [sid, r] of reported) if (r.at + REPORT_FORGET_SECONDS <= now) reported.delete(sid);
  const next = { reported: [...reported.values()].sort((a, b) => compareNames(a.sid, b.sid)) };
  return { next, notices };
}
