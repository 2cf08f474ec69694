/** Tenants, and the submission of the planned jobs at their times, through API restarts. */
import { TENANT_NAMES, type PlannedJob } from './workload.js';
import { newJobRec, type JobRec, type Tenant } from './jobs.js';
import type { ApiClient } from './api-client.js';
import { sleep, type Clock } from './clock.js';
import type { Violations } from './violations.js';

export async function createTenants(client: ApiClient, adminKey: string): Promise<Tenant[]> {
  const tenants: Tenant[] = [];
  for (const name of TENANT_NAMES) {
    const c = await client.call('POST', '/v1/tenants', adminKey, { name });
    const tok = await client.call('POST', '/v1/auth/token', null, { apiKey: c.body.apiKey });
    tenants.push({ name, id: c.body.id, apiKey: c.body.apiKey, token: tok.body.token });
  }
  return tenants;
}

export interface Submission {
  seed: number;
  client: ApiClient;
  tenants: readonly Tenant[];
  /** where accepted jobs go; the monitors read it while jobs are still being submitted */
  jobs: JobRec[];
  violations: Violations;
  clock: Clock;
}

/**
 * Each job under an idempotency key of its own, retried until the API accepts it: a submission
 * the API crashed in the middle of may or may not have been accepted, and the key makes the retry
 * return the same job instead of a second one. Anything but 201 or a 5xx stops the soak: the
 * specs are valid, so a 4xx means the soak and the API disagree.
 */
export async function submitJobs(planned: readonly PlannedJob[], startedAt: number, s: Submission) {
  for (const p of planned) {
    await sleep(Math.max(0, startedAt + p.at - Date.now()));
    const t = s.tenants[p.tenant]!;
    const key = `soak-${s.seed}-${p.spec.name}`;
    for (let tries = 0; ; tries++) {
      try {
        const r = await fetch(`${s.client.url}/v1/jobs`, {
          method: 'POST',
          headers: {
            'content-type': 'application/json',
            authorization: `Bearer ${t.token}`,
            'idempotency-key': key,
          },
          body: JSON.stringify(p.spec),
          signal: AbortSignal.timeout(15_000),
        });
        const body = (await r.json()) as { id: string };
        if (r.status === 201) {
          if (!s.jobs.some((j) => j.id === body.id)) s.jobs.push(newJobRec(body.id, t, p.spec));
          break;
        }
        if (r.status >= 500 && !s.client.outages.isDown())
          s.violations.violate('no_5xx', `POST /v1/jobs → ${r.status} ${JSON.stringify(body)}`);
        if (r.status < 500) throw new Error(`submit ${r.status}: ${JSON.stringify(body)}`);
      } catch (e) {
        if ((e as Error).message.startsWith('submit')) throw e;
        if (tries > 200) throw e;
      }
      await sleep(300);
    }
  }
  s.clock.log(`submitted ${s.jobs.length} jobs`);
}
