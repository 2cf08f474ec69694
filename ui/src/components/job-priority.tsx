/**
 * A job's priority, changed from its page (PATCH /v1/jobs/{id}): it orders the tenant's own jobs
 * at the next scheduling round, and never moves one ahead of another tenant's. A refusal (a job
 * that finished meanwhile) is said under the control, which shows the job's priority again.
 */
import { NativeSelect } from '@mantine/core';
import { unwrap, type Job } from '../../../sdk/src/index.js';
import { useApi } from '../api-context.js';
import { refusalText } from '../refusal.js';
import { useAction } from '../use-action.js';

const PRIORITIES = ['low', 'normal', 'high', 'urgent'] as const;
type Priority = (typeof PRIORITIES)[number];

export function JobPriority({ job, onChanged }: { job: Job; onChanged: () => void }) {
  const { client } = useApi();
  const change = useAction();
  const set = (priority: Priority) =>
    void change
      .run(() =>
        unwrap(client.PATCH('/v1/jobs/{id}', { params: { path: { id: job.id } }, body: { priority } })),
      )
      .then(onChanged);
  return (
    <NativeSelect
      label="Priority"
      description="Orders your own jobs"
      data={[...PRIORITIES]}
      value={job.priority}
      disabled={change.busy}
      onChange={(e) => set(e.currentTarget.value as Priority)}
      error={change.error ? `Not changed: ${refusalText(change.error)}` : undefined}
      data-testid="job-priority"
      w={160}
    />
  );
}
