/**
 * What the node offers. With `nvidia-smi` on PATH and no `--virtual-devices`, the node's GPUs
 * (index, total and free memory); otherwise virtual devices: a thread budget and a memory budget
 * each, which the engine enforces with its arena.
 */
import { spawnSync } from 'node:child_process';
import type { DeviceReport } from './control-plane-client.js';

export function parseNvidiaSmi(csv: string): DeviceReport[] {
  return csv
    .trim()
    .split('\n')
    .filter(Boolean)
    .map((line) => {
      const [index, total, free] = line.split(',').map((x) => Number(x.trim()));
      if (![index, total, free].every((n) => Number.isFinite(n)))
        throw new Error(`unexpected nvidia-smi line: ${line}`);
      const MiB = 1024 * 1024;
      return {
        index: index!,
        kind: 'cuda',
        memoryBytes: total! * MiB,
        freeMemoryBytes: free! * MiB,
        threads: 1,
      };
    });
}

export function discoverGpus(): DeviceReport[] | null {
  const r = spawnSync(
    'nvidia-smi',
    ['--query-gpu=index,memory.total,memory.free', '--format=csv,noheader,nounits'],
    {
      encoding: 'utf8',
      timeout: 10_000,
    },
  );
  if (r.error || r.status !== 0) return null;
  const gpus = parseNvidiaSmi(r.stdout);
  return gpus.length ? gpus : null;
}

export function virtualDevices(count: number, memoryBytes: number, threads: number): DeviceReport[] {
  return Array.from({ length: count }, (_, index) => ({
    index,
    kind: 'cpu-virtual',
    memoryBytes,
    freeMemoryBytes: memoryBytes,
    threads,
  }));
}
