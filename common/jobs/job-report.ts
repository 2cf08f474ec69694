/**
 * A node's job report (metrics, stage profiles, job events, device-seconds) applied as one
 * transaction that first locks the job row for the reporting node and run: the guard and every
 * write commit together, so a requeue (which bumps `queue_seq`) either waits for the report or
 * makes it change nothing — a late report of an earlier run cannot land on the run placed now.
 * The same lock makes a report apply at most once: a resend of one already applied (numbered no
 * higher than the run's newest applied, `reported_seq`) is answered as applied and changes nothing.
 *
 * One exception, as for checkpoint records (reports.ts LATE_RUN_GUARD): a report of the run just
 * before the job's current one, requeued `node_lost` from this node, delivered late from the
 * daemon's outbox while the job waits in the queue for its next run. Its metrics and profiles are
 * recorded (the job resumes from that run's late checkpoints, so the steps they measured are the
 * job's history: before, a job that resumed from step 600 had no metrics for steps 401–600), and its
 * device-seconds are charged (real device time, spent before the requeue: bounded by the wall time
 * from that run's placement to the requeue, `queued_at`). Its job events are not: they describe
 * moves inside a placement the requeue ended. Once the next run is placed, ignored as before.
 */
import type pg from 'pg';
import type { JobReport, Placement } from '../node-protocol/index.js';
import { splitReport } from '../node-protocol/index.js';
import { recordNodeEvents } from './node-events.js';
import { insertProfiles, LATE_RUN_GUARD, recordUsage, upsertMetrics } from './reports.js';

export interface ReportResult {
  applied: boolean;
  /** Job events to announce after the commit. */
  eventIds: string[];
}

export async function applyJobReport(
  pool: pg.Pool,
  jobId: string,
  nodeId: string,
  report: JobReport,
): Promise<ReportResult> {
  const client = await pool.connect();
  try {
    await client.query('BEGIN');
    const held = await client.query(
      `SELECT status, placement, reported_run = queue_seq AND reported_seq >= $4 AS seen, false AS late
         FROM jobs WHERE id = $1 AND node_id = $2 AND queue_seq = $3 FOR UPDATE`,
      [jobId, nodeId, report.queueSeq, report.reportSeq],
    );
    // Else a report of the run just before, requeued node_lost from this node, the next run not
    // placed yet (LATE_RUN_GUARD): numbered in that run (`reported_run` names it).
    const late = held.rows[0]
      ? held
      : await client.query(
          `SELECT status, placement, reported_run IS NOT DISTINCT FROM $3::int AND reported_seq >= $4 AS seen,
                  true AS late
             FROM jobs WHERE id = $1 AND ${LATE_RUN_GUARD('jobs', '$2', '$3')} FOR UPDATE`,
          [jobId, nodeId, report.queueSeq, report.reportSeq],
        );
    const row = late.rows[0] as
      { status: string; placement: Placement; seen: boolean; late: boolean } | undefined;
    if (!row || row.seen) {
      await client.query('ROLLBACK');
      // A resend of a report already applied (its first answer was lost): applied, once.
      return { applied: row?.seen === true, eventIds: [] };
    }
    // Metrics, profiles and events only while the run holds the job; the device-seconds its last
    // report carries after a cancel or an outcome were still spent by this run, and are charged.
    // A late run's metrics and profiles count too (nothing has run since), not its events.
    const live = row.status === 'placed' || row.status === 'running';
    let eventIds: string[] = [];
    if (live) {
      // Events first: a move that does not fit the placement refuses the whole report (400).
      eventIds = await recordNodeEvents(client, jobId, row.placement, report.events);
    }
    if (live || row.late) {
      await upsertMetrics(client, jobId, report.metrics);
      await insertProfiles(client, jobId, nodeId, report.profiles);
    }
    // The report's number in the run and, for a live run's metrics, the newest step reported (the
    // run's first with its time gives the run's pace with its start — engine build, warm-up, first
    // onload — left out, api/jobs/serialize.ts): written with its device-seconds, one update of the row.
    const step =
      (live || row.late) && report.metrics.length
        ? report.metrics.reduce((m, p) => Math.max(m, p.step), 0)
        : null;
    await recordUsage(
      client,
      jobId,
      report.deviceSeconds,
      splitReport(report.profiles, report.deviceSeconds),
      {
        reportSeq: report.reportSeq,
        step,
        ...(row.late ? { lateRun: report.queueSeq } : {}),
      },
    );
    await client.query('COMMIT');
    return {
      applied: live || row.late || (report.metrics.length === 0 && report.events.length === 0),
      eventIds,
    };
  } catch (err) {
    await client.query('ROLLBACK').catch(() => undefined);
    throw err;
  } finally {
    client.release();
  }
}
