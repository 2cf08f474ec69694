/**
 * The API's view of every accepted job, read as a tenant would: statuses, events (checked for
 * order as they arrive) and checkpoints (checked to stay listed).
 */
import type { ApiClient } from '../api-client.js';
import { checkCheckpointsKept } from '../checks/checkpoints.js';
import { checkEventOrder } from '../checks/event-order.js';
import type { JobRec, Tenant } from '../jobs.js';
import type { Violations } from '../violations.js';

const EVENT_PAGE = 1000;

export class JobWatcher {
  constructor(
    private readonly client: ApiClient,
    private readonly tenants: readonly Tenant[],
    private readonly jobs: readonly JobRec[],
    private readonly violations: Violations,
  ) {}

  async pollStatuses(): Promise<void> {
    for (const t of this.tenants) {
      let after: string | null = null;
      for (;;) {
        const r = await this.client.call(
          'GET',
          `/v1/jobs?limit=100${after ? `&after=${after}` : ''}`,
          t.token,
        );
        if (r.status !== 200) return;
        for (const j of r.body.data as { id: string; status: string }[]) {
          const rec = this.jobs.find((x) => x.id === j.id);
          if (rec) rec.status = j.status;
        }
        after = r.body.nextCursor;
        if (!after) break;
      }
    }
  }

  async pollEvents(j: JobRec): Promise<void> {
    for (;;) {
      const r = await this.client.call(
        'GET',
        `/v1/jobs/${j.id}/events?after=${j.lastEventId}&limit=${EVENT_PAGE}`,
        j.tenant.token,
      );
      if (r.status !== 200) return;
      const data = r.body.data as JobRec['events'];
      let prev = j.lastEventId;
      for (const e of data) {
        checkEventOrder(this.violations, j, e, prev);
        prev = Math.max(prev, Number(e.id));
        j.events.push({ ...e, id: Number(e.id) });
      }
      j.lastEventId = prev;
      if (data.length < EVENT_PAGE) return;
    }
  }

  async pollCheckpoints(j: JobRec): Promise<void> {
    const r = await this.client.call('GET', `/v1/jobs/${j.id}/checkpoints`, j.tenant.token);
    if (r.status !== 200) return;
    const ids = new Set<string>();
    for (const c of r.body.data as { id: string; step: number; sha256: string; sizeBytes: number }[]) {
      ids.add(c.id);
      if (!j.checkpoints.has(c.id))
        j.checkpoints.set(c.id, {
          step: c.step,
          sha256: c.sha256,
          sizeBytes: c.sizeBytes,
          firstSeen: Date.now(),
        });
    }
    checkCheckpointsKept(this.violations, j, ids);
  }
}
