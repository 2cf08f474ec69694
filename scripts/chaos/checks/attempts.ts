/**
 * Attempts accounting: a job is charged an attempt only for a failure of its own. Interruptions
 * (preemption, drain, lost contact, refunds) are not charged, so every charged requeue beyond the
 * first run must be explained by a fault the soak caused: an engine kill of that job, or a daemon
 * killed or paused on a node it was placed on.
 */
import type { DaemonFault, EngineKill } from '../injectors.js';
import type { JobRec } from '../jobs.js';
import type { Violations } from '../violations.js';
import type { JobRow } from './outcomes.js';

export interface FaultRecords {
  engineKills: readonly EngineKill[];
  daemonFaults: readonly DaemonFault[];
}

export function checkAttempts(v: Violations, job: JobRec, row: JobRow, faults: FaultRecords): void {
  const ev = job.events;
  const counted = row.attempts - row.interruptions;
  const charged = ev.filter(
    (e) =>
      e.type === 'job.queued' &&
      e.data.reason &&
      !['preempted', 'drained', 'lost_contact'].includes(e.data.reason),
  );
  const refunds = ev.filter((e) => e.type === 'job.attempt_refunded').length;
  const kills = faults.engineKills.filter((k) => k.job === job.id).length;
  const placedOn = new Set(
    ev.filter((e) => e.type === 'job.placed').map((e) => String(e.data.placement?.nodeId)),
  );
  const nodeFaults = faults.daemonFaults.filter((f) => placedOn.has(f.node)).length;

  v.count();
  if (row.interruptions > row.attempts)
    v.violate(
      'interruptions_within_attempts',
      `job ${job.id}: interruptions ${row.interruptions} > attempts ${row.attempts} (countedAttempts clamps to ${Math.max(0, counted)}); refunds ${refunds}`,
    );

  // A node_lost requeue of a running job that nobody refunded must come from a daemon that died or
  // stopped on that node, or from a crash of the job whose report came late.
  for (const e of ev.filter((x) => x.type === 'job.queued' && x.data.reason === 'node_lost')) {
    const refunded = ev.some((x) => x.type === 'job.attempt_refunded' && x.data.queueSeq === e.data.queueSeq);
    const wasRunning = ev.some(
      (x, k) =>
        x.type === 'job.running' &&
        x.id < e.id &&
        !ev.slice(k + 1).some((y) => y.type === 'job.queued' && y.id < e.id),
    );
    const at = Date.parse(e.createdAt);
    // An engine kill is a crash, charged anyway: when its report reached the API only after the
    // node was found lost (an API outage between), the node_lost requeue is the charge it made.
    const explained =
      faults.daemonFaults.some((f) => f.node === e.data.nodeId && f.at <= at && at - f.until < 30_000) ||
      faults.engineKills.some((k) => k.job === job.id && k.at <= at && at - k.at < 60_000);
    v.count();
    if (wasRunning && !refunded && !explained)
      v.violate(
        'node_lost_explained',
        `job ${job.id}: requeued node_lost (event ${e.id}, run ${e.data.queueSeq}, ${e.data.error}) with no daemon fault on that node and no refund`,
      );
  }

  v.count();
  if (counted - 1 > kills + nodeFaults)
    v.violate(
      'attempts_not_charged_for_platform_faults',
      `job ${job.id}: countedAttempts ${counted} (attempts ${row.attempts}, interruptions ${row.interruptions}, refunds ${refunds}); engine kills ${kills}, daemon faults on its nodes ${nodeFaults}; charged requeues: ${charged
        .map((e) => `${e.data.reason}@${e.id}`)
        .join(' ')}`,
    );

  for (const e of ev.filter((x) => x.type === 'job.queued' && x.data.reason === 'crashed')) {
    const at = Date.parse(e.createdAt);
    const explained = faults.engineKills.some(
      (k) => k.job === job.id && k.at <= at + 1000 && at - k.at < 60_000,
    );
    v.count();
    if (!explained)
      v.violate(
        'crash_explained',
        `job ${job.id}: requeued 'crashed' (event ${e.id}, ${JSON.stringify(e.data)}) with no engine kill of it`,
      );
  }
}
