import type { MigrationBlocker } from './types';

/**
 * What in a guest config blocks migration (spec §3.7, qemu-server `QemuMigrate/Helpers.pm`).
 * Only the config is looked at: local disks need the storage's `shared` flag and are reported by
 * the precondition check (`migratePrecheck`), not here. Sorted by key (byte order).
 * @param type `qemu` or `lxc`
 * @param entries the config (key → value text)
 */
export function migrationBlockers(type: 'qemu' | 'lxc', entries: ReadonlyMap<string, string>): MigrationBlocker[] {
  const out: MigrationBlocker[] = [];
  const add = (key: string, reason: string, scope: MigrationBlocker['scope']) => out.push({ key, reason, scope });
  for (const [key, value] of entries) {
    if (key === 'lock') add(key, `config is locked ('${value}')`, 'always');
    else if (key === 'template' && (value === '1' || value === 'true')) add(key, 'guest is a template', 'always');
    if (type === 'lxc') {
      if (/^mp\d+$/.test(key) && value.startsWith('/')) add(key, 'bind mount of a host path', 'always');
      else if (/^dev\d+$/.test(key)) add(key, 'host device passed through', 'always');
      continue;
    }
    if (/^hostpci\d+$/.test(key)) {
      if (!/(^|,)mapping=/.test(value)) add(key, 'pci device passed through without a resource mapping', 'always');
      else add(key, 'mapped pci device: live migration only if the mapping is live-migration-capable', 'live');
    } else if (/^usb\d+$/.test(key)) {
      if (/(^|,)host=/.test(value) && !/(^|,)mapping=/.test(value) && !/(^|,)host=spice(,|$)/.test(value)) {
        add(key, 'host usb device passed through without a resource mapping', 'always');
      }
    } else if (/^serial\d+$/.test(key)) {
      if (value !== 'socket') add(key, `serial port '${value}' is a host device`, 'always');
    } else if (/^parallel\d+$/.test(key)) add(key, 'parallel port of the host', 'always');
    else if (key === 'ivshmem' || key === 'hostusb' || key === 'hostpci')
      add(key, 'host resource passed through', 'always');
    else if (key === 'amd-sev' || key === 'intel-tdx') add(key, 'confidential guest: no live migration', 'live');
    else if (/^virtiofs\d+$/.test(key)) add(key, 'virtiofs share: no live migration', 'live');
    else if (key === 'vga' && /(^|,)clipboard=vnc(,|$)/.test(value))
      add(key, 'vnc clipboard forces an offline migration on machine versions below 10.1', 'live');
    else if (/^(ide|sata|scsi|virtio)\d+$/.test(key) && (/^cdrom(,|$)/.test(value) || /^\/dev\//.test(value))) {
      add(key, 'physical drive passthrough', 'always');
    }
  }
  return out.sort((a, b) => (a.key < b.key ? -1 : a.key > b.key ? 1 : 0));
}
