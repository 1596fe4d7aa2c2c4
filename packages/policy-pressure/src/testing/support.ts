// Fixture builders for this package's tests (not exported from the package).
import { ReplayCluster } from '@poise/policy/testing';

export const GIB = 1024 ** 3;

/**
 * Seed symptom 3: three 32-core, 128 GiB nodes, almost idle. node1 carries its own 0.5 cores /
 * 2 GiB and two small guests; node2 and node3 only 0.6 cores / 2.5 GiB each. Node loads 6.3 %,
 * 1.9 %, 1.9 %: an imbalance of about 43 %, above the 30 % threshold, with nothing to gain.
 * With `configs`, each guest has a guest configuration (a shared disk: migratable).
 */
export function idleCluster(configs = false): ReplayCluster {
  return new ReplayCluster({
    nodes: [
      { name: 'node1', maxcpu: 32, maxmem: 128 * GIB, cpu: 0.5, mem: 2 * GIB, pressureCpu: 3.1, pressureMem: 0 },
      { name: 'node2', maxcpu: 32, maxmem: 128 * GIB, cpu: 0.6, mem: 2.5 * GIB, pressureCpu: 0.4, pressureMem: 0 },
      { name: 'node3', maxcpu: 32, maxmem: 128 * GIB, cpu: 0.6, mem: 2.5 * GIB, pressureCpu: 0.2, pressureMem: 0 },
    ],
    guests: [
      {
        sid: 'vm:101',
        node: 'node1',
        cpu: 1,
        mem: 4 * GIB,
        ...(configs ? { config: { scsi0: 'ceph:vm-101-disk-0' } } : {}),
      },
      {
        sid: 'vm:102',
        node: 'node1',
        cpu: 0.5,
        mem: 2 * GIB,
        ...(configs ? { config: { scsi0: 'ceph:vm-102-disk-0' } } : {}),
      },
    ],
  });
}
