/**
 * The tenant's jobs by status, from the one usage read. The API counts no status for a tenant but
 * queued and running (`queuedJobs`, `runningJobs`), and the job list pages without a total, so
 * counting each status would cost a request per page of jobs on every refresh. What it does give is
 * the status of each job that held devices this month (at most 100, the most device time first):
 * those are counted, and the card says that is what they are.
 */
import { Badge, Card, Group, Text, Title } from '@mantine/core';
import type { Usage } from '../../../sdk/src/index.js';
import { statusColor } from '../format.js';

const ORDER = ['queued', 'admitted', 'placed', 'running', 'preempted', 'succeeded', 'failed', 'cancelled'];
const USAGE_JOBS_MAX = 100;

export function JobsByStatus({ usage }: { usage: Usage }) {
  const counts = new Map<string, number>();
  for (const j of usage.jobs) counts.set(j.status, (counts.get(j.status) ?? 0) + 1);
  const statuses = [...counts.keys()].sort((a, b) => ORDER.indexOf(a) - ORDER.indexOf(b));
  return (
    <Card withBorder data-testid="jobs-by-status">
      <Title order={5} mb="xs">
        Jobs that held devices this month, by status
      </Title>
      {statuses.length ? (
        <Group gap="md">
          {statuses.map((s) => (
            <Group key={s} gap={6} data-testid="usage-status" data-status={s} data-count={counts.get(s)}>
              <Badge color={statusColor[s] ?? 'gray'} variant="light">
                {s}
              </Badge>
              <Text fw={600}>{counts.get(s)}</Text>
            </Group>
          ))}
        </Group>
      ) : (
        <Text c="dimmed">No job held a device this month.</Text>
      )}
      <Text size="xs" c="dimmed" mt="xs">
        {usage.jobs.length >= USAGE_JOBS_MAX ? `The ${USAGE_JOBS_MAX} with the most device time only. ` : ''}
        Jobs that never ran are not in these counts, and a paused job counts as queued.
      </Text>
    </Card>
  );
}
