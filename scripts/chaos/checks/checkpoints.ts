/**
 * A checkpoint, once listed, stays listed and downloadable, and its bytes match the sha256 and
 * size it was listed with: a resumed job may have overwritten or pruned the files under it.
 */
import { createHash } from 'node:crypto';
import type { ApiClient } from '../api-client.js';
import type { JobRec } from '../jobs.js';
import type { Violations } from '../violations.js';

/** While the soak runs: every checkpoint seen before is in the listing just read (listed: its ids). */
export function checkCheckpointsKept(v: Violations, job: JobRec, listed: ReadonlySet<string>): void {
  for (const [id, c] of job.checkpoints) {
    v.count();
    if (!listed.has(id))
      v.violate('checkpoint_kept', `job ${job.id}: checkpoint ${id} (step ${c.step}) no longer listed`);
  }
}

/** At the end: every checkpoint ever listed downloads whole, with the listed sha256. */
export async function checkCheckpointsDownloadable(v: Violations, client: ApiClient, job: JobRec) {
  for (const [id, c] of job.checkpoints) {
    const res = await fetch(`${client.url}/v1/jobs/${job.id}/checkpoints/${id}/content`, {
      headers: { authorization: `Bearer ${job.tenant.token}` },
    });
    v.count();
    if (res.status !== 200) {
      v.violate(
        'checkpoint_downloadable',
        `job ${job.id} checkpoint ${id} step ${c.step}: ${res.status} ${await res.text()}`,
      );
      continue;
    }
    const buf = Buffer.from(await res.arrayBuffer());
    const sha = createHash('sha256').update(buf).digest('hex');
    if (sha !== c.sha256 || buf.length !== c.sizeBytes)
      v.violate(
        'checkpoint_sha256',
        `job ${job.id} checkpoint ${id} step ${c.step}: sha ${sha} size ${buf.length}, listed ${c.sha256} ${c.sizeBytes}`,
      );
  }
}
