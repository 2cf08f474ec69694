/**
 * A job's metric points for its curves: all of them once, then while it runs only those from its
 * newest step on (a step's points may come in more than one report), every few seconds. Reading
 * every page again on each poll grew with each step of a long run (~12 points a step).
 */
import { useEffect, useState } from 'react';
import type { MetricPoint } from '../../sdk/src/index.js';
import { allJobMetrics } from '../../sdk/src/metrics.js';
import { useApi } from './api-context.js';

const POLL_MS = 3000;

export function useJobMetrics(jobId: string, done: boolean): MetricPoint[] {
  const { client } = useApi();
  const [points, setPoints] = useState<MetricPoint[]>([]);
  useEffect(() => {
    let live = true;
    let timer: ReturnType<typeof setTimeout> | undefined;
    const byKey = new Map<string, MetricPoint>();
    let newest: number | undefined;
    const run = async () => {
      try {
        const fresh = await allJobMetrics(client, jobId, newest === undefined ? {} : { from_step: newest });
        if (!live) return;
        for (const p of fresh) {
          byKey.set(`${p.step}\u0000${p.name}`, p);
          newest = Math.max(newest ?? p.step, p.step);
        }
        if (fresh.length > 0)
          setPoints([...byKey.values()].sort((a, b) => a.step - b.step || a.name.localeCompare(b.name)));
      } catch (err) {
        if ((err as { status?: unknown }).status === 404) return;
      }
      if (live && !done) timer = setTimeout(run, POLL_MS);
    };
    void run();
    return () => {
      live = false;
      clearTimeout(timer);
    };
  }, [client, jobId, done]);
  return points;
}
