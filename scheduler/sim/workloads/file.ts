/**
 * Workloads from files: a JSON document shaped like `SimWorkload` (model.ts), or a CSV of jobs
 * (`id,tenant,arrival,devices,seconds[,recurring]`, arrival and seconds in seconds) that the
 * rl-job rules turn into RL jobs on a cluster given by flags. Both are checked as they are read.
 */
import { readFileSync } from 'node:fs';
import { GiB, NO_QUOTA, type SimWorkload } from '../model.js';
import { Rng } from '../rng.js';
import { rlJob } from './rl-job.js';

export function fileWorkload(path: string, seed: number, nodes = 4): SimWorkload {
  const text = readFileSync(path, 'utf8');
  if (path.endsWith('.json')) {
    const w = JSON.parse(text) as SimWorkload;
    if (!w.cluster || !Array.isArray(w.tenants) || !Array.isArray(w.jobs))
      throw new Error(`${path}: expected { name, cluster, tenants, jobs }`);
    for (const j of w.jobs)
      if (!w.tenants.some((t) => t.id === j.tenant))
        throw new Error(`${path}: job ${j.id} has unknown tenant ${j.tenant}`);
    return w;
  }
  const rng = new Rng(seed);
  const [header, ...lines] = text.trim().split('\n');
  const cols = header!.split(',').map((c) => c.trim());
  const need = ['id', 'tenant', 'arrival', 'devices', 'seconds'];
  for (const c of need) if (!cols.includes(c)) throw new Error(`${path}: missing column ${c}`);
  const at = (f: string[], c: string) => f[cols.indexOf(c)]?.trim() ?? '';
  const jobs = lines.map((line, i) => {
    const f = line.split(',');
    const devices = Number(at(f, 'devices'));
    const seconds = Number(at(f, 'seconds'));
    const arrival = Number(at(f, 'arrival'));
    if (!(devices > 0 && seconds > 0 && arrival >= 0)) throw new Error(`${path}:${i + 2}: bad job row`);
    return rlJob(
      {
        id: at(f, 'id'),
        tenant: at(f, 'tenant'),
        arrival,
        devices,
        seconds,
        recurring: at(f, 'recurring') === 'true',
      },
      rng,
    );
  });
  const tenants = [...new Set(jobs.map((j) => j.tenant))]
    .sort()
    .map((id) => ({ id, weight: 1, ...NO_QUOTA }));
  return {
    name: path,
    cluster: { nodes, devicesPerNode: 8, deviceMemoryBytes: 80 * GiB, hostMemoryBytes: 2048 * GiB },
    tenants,
    jobs,
  };
}
