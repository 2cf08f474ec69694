/**
 * Replays a window of the public Philly trace (Jeon et al., USENIX ATC 2019; CC-BY-4.0, as
 * published with the Pollux simulator) read from ../shared/traces/philly.csv, never copied here.
 * Seeded rules that turn a trace job into an RL job:
 *   - tenant = its virtual cluster, every tenant weight 1 (the trace has no quotas or weights);
 *   - window: `jobs` consecutive submissions (by time) from a seeded start;
 *   - devices = num_gpus rounded up to 1/2/4/8 (16-GPU jobs become 8: a job holds one node);
 *   - run time alone = duration clamped to 30 min – 4 h, so that one run stays short;
 *   - arrivals keep their order and relative gaps, compressed so that the window arrives within
 *     `arrivalHours`; the cluster is sized so that the offered device-time is `overload` times
 *     what it can deliver over that span (it saturates);
 *   - stage mix, idle fraction, model size, state bytes: rl-job.ts's rules, drawn per job;
 *   - half the jobs are recurring (see synthetic.ts).
 */
import { existsSync, readFileSync } from 'node:fs';
import { GiB, NO_QUOTA, type SimWorkload } from '../model.js';
import { Rng } from '../rng.js';
import { rlJob } from './rl-job.js';

export const PHILLY_PATH = new URL('../../../../shared/traces/philly.csv', import.meta.url);

export interface PhillyOptions {
  seed: number;
  path?: string | URL;
  jobs?: number;
  arrivalHours?: number;
  overload?: number;
  recurringShare?: number;
}

interface TraceRow {
  at: number;
  duration: number;
  gpus: number;
  cluster: string;
}

function readTrace(path: string | URL): TraceRow[] {
  const lines = readFileSync(path, 'utf8').split('\n');
  const header = lines[0]!.split(',');
  const col = (name: string) => header.indexOf(name);
  const [ts, du, ng, cl] = [col('timestamp'), col('duration'), col('num_gpus'), col('cluster')];
  const rows: TraceRow[] = [];
  for (const line of lines.slice(1)) {
    const f = line.split(',');
    if (f.length < header.length) continue;
    const at = Date.parse(`${f[ts]!.replace(' ', 'T')}Z`);
    const duration = Number(f[du]);
    const gpus = Number(f[ng]);
    if (!Number.isFinite(at) || !(duration > 0) || !(gpus > 0)) continue;
    rows.push({ at, duration, gpus, cluster: f[cl]! });
  }
  return rows.sort((a, b) => a.at - b.at);
}

/** The replay, or null when the trace is not on this machine. */
export function phillyWorkload(o: PhillyOptions): SimWorkload | null {
  const path = o.path ?? PHILLY_PATH;
  if (!existsSync(path)) return null;
  const rng = new Rng(o.seed);
  const all = readTrace(path);
  const count = Math.min(o.jobs ?? 160, all.length);
  const start = Math.floor(rng.next() * (all.length - count));
  const window = all.slice(start, start + count);
  const t0 = window[0]!.at;
  const span = Math.max(1, window[window.length - 1]!.at - t0);
  const arrivalSeconds = (o.arrivalHours ?? 6) * 3600;
  const jobs = window.map((row, i) =>
    rlJob(
      {
        id: `philly-${start + i}`,
        tenant: `vc-${row.cluster}`,
        arrival: Math.round(((row.at - t0) / span) * arrivalSeconds),
        devices: Math.min(8, row.gpus),
        seconds: Math.min(4 * 3600, Math.max(1800, row.duration)),
        recurring: rng.next() < (o.recurringShare ?? 0.5),
      },
      rng,
    ),
  );
  const offered = jobs.reduce((s, j) => s + j.devices * j.steps * stepSecondsOf(j.shape), 0);
  const nodes = Math.max(2, Math.round(offered / (o.overload ?? 2) / arrivalSeconds / 8));
  const tenants = [...new Set(jobs.map((j) => j.tenant))].sort().map((id) => ({
    id,
    weight: 1,
    ...NO_QUOTA,
  }));
  return {
    name: `Philly window (seed ${o.seed}: jobs ${start}–${start + count - 1} of ${all.length})`,
    cluster: { nodes, devicesPerNode: 8, deviceMemoryBytes: 80 * GiB, hostMemoryBytes: 2048 * GiB },
    tenants,
    jobs,
  };
}

function stepSecondsOf(s: SimWorkload['jobs'][number]['shape']): number {
  return s.turns * (s.generateSeconds + s.envSeconds) + s.rewardSeconds + s.trainSeconds + s.syncSeconds;
}
