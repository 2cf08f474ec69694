/**
 * Group admission: submissions that arrive while an admission is in flight are admitted together by
 * one call to the `admit_jobs` SQL function (one round trip, one transaction, one commit) instead of
 * one statement each. Per element it does exactly what the single statement does (admit.ts), so the
 * quota guarantees are unchanged. A lone submission is sent at once: batching costs no latency when
 * the API is quiet and only forms under load, where it cuts PostgreSQL's and the pg client's work
 * per job.
 *
 * Submissions with an Idempotency-Key keep the single-statement path: a key conflict aborts its
 * whole transaction, which must not take other tenants' submissions down with it.
 */
import type pg from 'pg';
import type { JobSpec } from '../../common/job-spec.js';
import { admissionElement, admitJob, quotaError, type Admitted } from './admit.js';
import { jobFromRow, type JobRecord } from './serialize.js';

interface Waiting {
  tenantId: string;
  spec: JobSpec;
  resolve(a: Admitted): void;
  reject(err: unknown): void;
}

export interface AdmissionBatcherOptions {
  /** Most submissions in one call; more wait for the next. */
  maxBatch: number;
  /** Batches in flight at once (each on its own pooled connection). */
  maxInFlight: number;
  /**
   * Runs once per committed batch, before any of its submissions is answered: the enqueue, in one
   * round trip for the batch. It must not throw: what it fails to do, reconciliation does.
   */
  afterCommit?: (jobs: JobRecord[]) => Promise<void>;
}

export class AdmissionBatcher {
  private waiting: Waiting[] = [];
  private inFlight = 0;

  constructor(
    private readonly pool: pg.Pool,
    private readonly options: AdmissionBatcherOptions,
  ) {}

  admit(tenantId: string, spec: JobSpec): Promise<Admitted> {
    return new Promise<Admitted>((resolve, reject) => {
      this.waiting.push({ tenantId, spec, resolve, reject });
      this.pump();
    });
  }

  private pump(): void {
    while (this.inFlight < this.options.maxInFlight && this.waiting.length) {
      const batch = this.waiting.splice(0, this.options.maxBatch);
      this.inFlight++;
      void this.run(batch).finally(() => {
        this.inFlight--;
        this.pump();
      });
    }
  }

  private async run(batch: Waiting[]): Promise<void> {
    if (batch.length === 1) return this.runAlone(batch[0]!);
    const settled = await this.runBatch(batch);
    if (settled) return;
    // Nothing of the batch was written. Let each submission stand on its own, so that whatever
    // failed answers only the submission that caused it.
    await Promise.all(batch.map((w) => this.runAlone(w)));
  }

  /** The single-submission statement, for a batch of one or one element of a failed batch. */
  private async runAlone(w: Waiting): Promise<void> {
    let admitted: Admitted;
    try {
      admitted = await admitJob(this.pool, { tenantId: w.tenantId, spec: w.spec, idempotencyKey: null });
    } catch (err) {
      return w.reject(err);
    }
    await this.options.afterCommit?.([admitted.job]);
    w.resolve(admitted);
  }

  /** false when the statement failed (and so wrote nothing); otherwise every element is answered. */
  private async runBatch(batch: Waiting[]): Promise<boolean> {
    // Quota rows are locked in tenant order by every batch, so two batches in flight cannot
    // deadlock; within a tenant, arrival order decides who gets the last free slot.
    const ordered = batch
      .map((w, i) => ({ w, i }))
      .sort((a, b) => (a.w.tenantId < b.w.tenantId ? -1 : a.w.tenantId > b.w.tenantId ? 1 : a.i - b.i))
      .map((x) => x.w);
    let rows: Record<string, unknown>[];
    try {
      const r = await this.pool.query({
        name: 'admit-jobs',
        text: 'SELECT * FROM admit_jobs($1::jsonb)',
        values: [JSON.stringify(ordered.map((w) => admissionElement(w.tenantId, w.spec)))],
      });
      rows = r.rows;
    } catch {
      return false;
    }
    const jobs = ordered.map((_, i) => {
      const row = rows[i];
      return row && row.id !== null ? jobFromRow(row) : null;
    });
    await this.options.afterCommit?.(jobs.filter((j): j is JobRecord => j !== null));
    await Promise.all(
      ordered.map(async (w, i) => {
        const job = jobs[i];
        if (job) return w.resolve({ job, created: true });
        w.reject(await quotaError(this.pool, w.tenantId, w.spec.resources.devices).catch((e: unknown) => e));
      }),
    );
    return true;
  }
}
