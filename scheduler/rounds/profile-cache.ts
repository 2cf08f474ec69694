/**
 * The leader's copy of each profiled job's recent stage profiles (its last PROFILE_HISTORY_STEPS
 * steps), fed each round by the rows written since the last: re-reading every job's window each
 * round took 1.26 s at 1,000 running jobs of 1,000 steps, over the round interval
 * (docs/scheduler.md). A job's summary is computed again only when it has new rows or a new
 * placement, and a queued job's rows are not kept (it writes none until it runs again).
 *
 * Reading by id is exact per job: a report inserts its profiles while it holds the job's row
 * (`FOR UPDATE`, common/jobs/job-report.ts), so one job's rows commit in the order of their ids,
 * and a read that sees a job's row with id n has seen every row of that job below n.
 */
import type pg from 'pg';
import type { ProfileSummary } from '../core/types.js';
import type { ReplanInput } from '../planner/replan.js';
import {
  PROFILE_HISTORY_STEPS,
  WARMUP_STEPS,
  stageSamples,
  type ProfileRow,
} from '../planner/profile-summary.js';

export interface HistoryRow extends ProfileRow {
  step: number;
  id: number;
  /** When the row was written (ms). */
  at: number;
}

/** What the round reads of a job's history. */
export interface JobHistory {
  profile: ProfileSummary;
  /** Steps and mean wall seconds per step since `placedAt` (null before two). */
  sincePlaced: ReplanInput['sincePlaced'];
}

interface Entry {
  rows: HistoryRow[];
  /** The highest id read for the job (0: none yet). */
  lastId: number;
  /** The job has steps before `rows` (its warm-up is not among them). */
  cut: boolean;
  /** The summary for `rows` at `placedAt`, until either changes. */
  summary: { placedAt: number | null; history: JobHistory | null } | null;
  /**
   * A queued job's entry keeps its summary only: it writes no rows while queued, and 10,000 queued
   * jobs' windows would hold ~360 MB (195 bytes a row). Placed again, its window is read anew.
   */
  frozen: boolean;
}

const COLUMNS = `sp.id::float8 AS id, sp.stage, sp.step, sp.seconds, sp.batch, sp.devices,
  sp.peak_bytes::float8 AS peak_bytes, sp.onload_seconds, sp.offload_seconds, sp.occupancy, sp.partial_tail,
  (extract(epoch from sp.created_at) * 1000)::float8 AS at`;

/**
 * A new job's window: its last $2 steps, read as a range of stage_profiles (job_id, step). The
 * fences keep it one: without them PostgreSQL merged the range into a scan of every row of every
 * job (767 ms at 200 jobs of 500 steps). `cut`: the job has profiles before the range.
 */
const WINDOW = `WITH h AS MATERIALIZED (
  SELECT i.job_id, m.hi - $2::int AS lo,
         EXISTS (SELECT 1 FROM stage_profiles o WHERE o.job_id = i.job_id AND o.step <= m.hi - $2::int) AS cut
    FROM unnest($1::uuid[]) AS i(job_id)
    CROSS JOIN LATERAL (SELECT max(step) AS hi FROM stage_profiles p WHERE p.job_id = i.job_id) m
)
SELECT h.job_id, h.cut, ${COLUMNS}
  FROM h CROSS JOIN LATERAL (SELECT * FROM stage_profiles p WHERE p.job_id = h.job_id AND p.step > h.lo OFFSET 0) sp`;

/** Known jobs' rows past the last id read for each: a range of stage_profiles (job_id, id). */
const NEWER = `SELECT i.job_id, ${COLUMNS}
  FROM unnest($1::uuid[], $2::bigint[]) AS i(job_id, after)
  CROSS JOIN LATERAL (SELECT * FROM stage_profiles p
                       WHERE p.job_id = i.job_id AND p.id > i.after AND p.step IS NOT NULL OFFSET 0) sp`;

const rowOf = (r: Record<string, unknown>): HistoryRow => ({
  id: Number(r.id),
  stage: r.stage as string,
  step: r.step as number,
  seconds: r.seconds as number,
  batch: r.batch as number,
  devices: r.devices as number,
  peakBytes: r.peak_bytes as number,
  onloadSeconds: r.onload_seconds as number,
  offloadSeconds: r.offload_seconds as number,
  occupancy: (r.occupancy as number | null) ?? null,
  partialTail: (r.partial_tail as number | null) ?? null,
  at: r.at as number,
});

export class ProfileCache {
  private readonly jobs = new Map<string, Entry>();

  /** Jobs held, and the profile rows held for them (for tests and the bench). */
  get size(): { jobs: number; rows: number } {
    let rows = 0;
    for (const e of this.jobs.values()) rows += e.rows.length;
    return { jobs: this.jobs.size, rows };
  }

  /**
   * Brings the history of the `running` jobs (each with the ms it was placed at, for its steps
   * since) and of the `queued` ones that have run before up to date, and forgets every other job;
   * returns the history of each job that has one.
   */
  async read(
    pool: pg.Pool,
    running: ReadonlyMap<string, number | null>,
    queued: readonly string[],
  ): Promise<Map<string, JobHistory>> {
    const asked = new Map<string, number | null>([
      ...running,
      ...queued.map((id): [string, null] => [id, null]),
    ]);
    for (const [id, e] of this.jobs)
      if (!asked.has(id) || (e.frozen && running.has(id))) this.jobs.delete(id);
    // Rows since the last read for every job whose rows are held (a job requeued since has its run's
    // last ones still to read), the window of every job new here.
    const known = [...asked.keys()].filter((id) => this.jobs.get(id)?.frozen === false);
    const fresh = [...asked.keys()].filter((id) => !this.jobs.has(id));
    const [newer, windows] = await Promise.all([
      known.length ? pool.query(NEWER, [known, known.map((id) => this.jobs.get(id)!.lastId)]) : { rows: [] },
      fresh.length ? pool.query(WINDOW, [fresh, PROFILE_HISTORY_STEPS]) : { rows: [] },
    ]);
    const entry = (cut: boolean): Entry => ({ rows: [], lastId: 0, cut, summary: null, frozen: false });
    for (const r of windows.rows) {
      let e = this.jobs.get(r.job_id);
      if (!e) this.jobs.set(r.job_id, (e = entry(r.cut === true)));
      e.rows.push(rowOf(r));
    }
    // A job without profiles: known, with none yet.
    for (const id of fresh) if (!this.jobs.has(id)) this.jobs.set(id, entry(false));
    const grown = new Set<Entry>(fresh.map((id) => this.jobs.get(id)!));
    for (const r of newer.rows) {
      const e = this.jobs.get(r.job_id)!;
      e.rows.push(rowOf(r));
      grown.add(e);
    }
    for (const e of grown) {
      // In the order they were written, whichever query read them: sums come out the same.
      e.rows.sort((x, y) => x.id - y.id);
      e.lastId = e.rows.reduce((m, r) => Math.max(m, r.id), e.lastId);
      const lo = e.rows.reduce((m, r) => Math.max(m, r.step), -Infinity) - PROFILE_HISTORY_STEPS;
      const kept = e.rows.filter((r) => r.step > lo);
      if (kept.length < e.rows.length) e.cut = true;
      e.rows = kept;
      e.summary = null;
    }
    const out = new Map<string, JobHistory>();
    for (const [id, placedAt] of asked) {
      const e = this.jobs.get(id)!;
      if (e.summary?.placedAt !== placedAt)
        e.summary = { placedAt, history: summarizeHistory(e.rows, e.cut, placedAt) };
      if (e.summary.history) out.set(id, e.summary.history);
      if (!running.has(id) && !e.frozen) {
        e.frozen = true;
        e.rows = [];
      }
    }
    return out;
  }
}

interface Totals {
  steps: Set<number>;
  busy: number;
  switching: number;
  from: number;
  to: number;
}
const totals = (): Totals => ({ steps: new Set(), busy: 0, switching: 0, from: Infinity, to: -Infinity });
const add = (t: Totals, r: HistoryRow) => {
  t.steps.add(r.step);
  t.busy += r.seconds;
  t.switching += r.onloadSeconds + r.offloadSeconds;
  t.from = Math.min(t.from, r.at);
  t.to = Math.max(t.to, r.at);
};

/**
 * A job's figures from its recent steps: the mean step from the steps past its warm-up once there
 * are two of them (the first steps ran 1.5–2.5× the job's later pace); `samples` counts every
 * profiled step past the warm-up.
 */
export function summarizeHistory(
  rows: readonly HistoryRow[],
  earlierSteps: boolean,
  placedAt: number | null,
): JobHistory | null {
  if (!rows.length) return null;
  const first = Math.min(...rows.map((r) => r.step));
  const all = totals();
  const settled = totals();
  const since = totals();
  let peak = 0;
  for (const r of rows) {
    add(all, r);
    if (earlierSteps || r.step >= first + WARMUP_STEPS) add(settled, r);
    if (placedAt !== null && r.at >= placedAt) add(since, r);
    peak = Math.max(peak, r.peakBytes);
  }
  const use = settled.steps.size >= 2 ? settled : all;
  const steps = use.steps.size;
  const busy = use.busy / steps;
  const span = (use.to - use.from) / 1000;
  return {
    profile: {
      stepSeconds: steps > 1 ? Math.max(busy, span / (steps - 1)) : busy / 0.8,
      busySeconds: busy,
      switchSeconds: use.switching / steps,
      peakBytes: peak,
      samples: Math.max(0, all.steps.size - WARMUP_STEPS),
      stages: stageSamples(rows, earlierSteps),
    },
    sincePlaced:
      since.steps.size >= 2
        ? { steps: since.steps.size, stepSeconds: (since.to - since.from) / 1000 / (since.steps.size - 1) }
        : null,
  };
}
