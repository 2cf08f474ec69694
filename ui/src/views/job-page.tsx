/**
 * One job: its status as it changes (the event stream), where it waits if queued, its curves
 * (reward, held-out accuracy, KL, loss from the metrics API), its events and its checkpoints.
 */
import { useEffect, useMemo, useState } from 'react';
import { Alert, Anchor, Button, Card, Group, SimpleGrid, Stack, Table, Text, Title } from '@mantine/core';
import { Link } from 'wouter';
import { unwrap, type Job, type MetricPoint } from '../../../sdk/src/index.js';
import { useJobMetrics } from '../job-metrics.js';
import { useApi } from '../api-context.js';
import { statusOf, useJobEvents } from '../job-stream.js';
import { usePoll } from '../use-poll.js';
import { ago, finalStatuses, noNodeHolds, time, waitReasonText } from '../format.js';
import { ConfirmDialog } from '../components/confirm-dialog.js';
import { JobPriority } from '../components/job-priority.js';
import { MetricChart } from '../components/metric-chart.js';
import { NoNodeHolds } from '../components/no-node-holds.js';
import { StatusBadge } from '../components/status-badge.js';
import { CheckpointsTable } from './checkpoints.js';

const CURVES = [
  { name: 'reward_mean', color: '#1c7ed6' },
  { name: 'eval_accuracy', color: '#2f9e44' },
  { name: 'kl', color: '#e8590c' },
  { name: 'loss', color: '#ae3ec9' },
];

function curves(points: MetricPoint[]) {
  const byName = new Map<string, { steps: number[]; values: number[] }>();
  for (const p of points) {
    // A value that is not finite (a diverged loss, sent as "NaN") has no place on a chart.
    if (typeof p.value !== 'number') continue;
    const c = byName.get(p.name) ?? { steps: [], values: [] };
    c.steps.push(p.step);
    c.values.push(p.value);
    byName.set(p.name, c);
  }
  return byName;
}

/** What a refused action says before the API's reason (a failed pause read "Not cancelled"). */
const NOT_DONE = { cancel: 'Not cancelled', pause: 'Not paused', resume: 'Not resumed' } as const;

const BackToJobs = () => (
  <Anchor component={Link} href="/jobs" size="sm">
    ← Jobs
  </Anchor>
);

export function JobPage({ id }: { id: string }) {
  const { client } = useApi();
  const job = usePoll(() => unwrap(client.GET('/v1/jobs/{id}', { params: { path: { id } } })), 5000, [
    client,
    id,
  ]);
  // Not this tenant's, or not at all: nothing below has anything to show or to ask for.
  if (job.error && !job.data)
    return (
      <Stack>
        <BackToJobs />
        <Alert color="red" data-testid="job-error">
          {job.error.message}
        </Alert>
      </Stack>
    );
  if (!job.data) return <Text>Loading…</Text>;
  return <JobView id={id} job={job.data} reloadJob={job.reload} stale={job.error?.message ?? null} />;
}

/**
 * One job. `stale`: why its last refresh failed (the API unreachable, say), shown over what was read
 * before; the page kept a running job's status and progress as if live while every request failed.
 */
function JobView({
  id,
  job: j,
  reloadJob,
  stale,
}: {
  id: string;
  job: Job;
  reloadJob: () => void;
  stale: string | null;
}) {
  const { client } = useApi();
  const events = useJobEvents(client, id);
  const liveStatus = [...events]
    .reverse()
    .map(statusOf)
    .find((s) => s !== undefined);
  const done = liveStatus !== undefined && finalStatuses.has(liveStatus);
  const metrics = useJobMetrics(id, done);
  const checkpoints = usePoll(
    () => unwrap(client.GET('/v1/jobs/{id}/checkpoints', { params: { path: { id } } })),
    done ? 0 : 5000,
    [client, id, done],
  );
  // A status change reloads the job at once (queue position, start and finish times, error).
  useEffect(() => {
    if (liveStatus) reloadJob();
  }, [liveStatus, reloadJob]);
  // A new checkpoint shows at once rather than at the next poll.
  const written = events.filter((e) => e.type === 'job.checkpoint').length;
  const reloadCheckpoints = checkpoints.reload;
  useEffect(() => {
    if (written) reloadCheckpoints();
  }, [written, reloadCheckpoints]);
  const byName = useMemo(() => curves(metrics), [metrics]);
  const [acting, setActing] = useState(false);
  const [confirmingCancel, setConfirmingCancel] = useState(false);
  const [actionError, setActionError] = useState<{
    action: keyof typeof NOT_DONE;
    message: string;
  } | null>(null);

  const status = liveStatus ?? j.status;
  /** Cancel, pause or resume: the button spins until the API answers, then the job is read again. */
  const act = (action: 'cancel' | 'pause' | 'resume') => async () => {
    setActing(true);
    setActionError(null);
    try {
      await unwrap(client.POST(`/v1/jobs/{id}/${action}`, { params: { path: { id } } }));
    } catch (err) {
      setActionError({ action, message: (err as Error).message });
    } finally {
      setActing(false);
      reloadJob();
    }
  };

  return (
    <Stack>
      <BackToJobs />
      {stale && (
        <Alert color="yellow" data-testid="job-stale">
          Not refreshed ({stale}): showing what was last read
        </Alert>
      )}
      <Group justify="space-between">
        <Group>
          <Title order={3}>{j.name}</Title>
          <StatusBadge status={status} />
        </Group>
        {!finalStatuses.has(status) && (
          <Group align="flex-end">
            <JobPriority job={j} onChanged={reloadJob} />
            <Button
              variant="light"
              onClick={act(j.pausedAt ? 'resume' : 'pause')}
              loading={acting}
              data-testid="pause-job"
            >
              {j.pausedAt ? 'Resume' : 'Pause'}
            </Button>
            <Button
              color="red"
              variant="light"
              onClick={() => setConfirmingCancel(true)}
              loading={acting}
              data-testid="cancel-job"
            >
              Cancel
            </Button>
          </Group>
        )}
      </Group>
      <ConfirmDialog
        opened={confirmingCancel}
        title={`Cancel ${j.name}?`}
        body={['It stops for good: a cancelled job cannot be resumed (pausing it can be).']}
        keepLabel="Keep the job"
        confirmLabel="Cancel the job"
        confirmTestId="confirm-cancel"
        onKeep={() => setConfirmingCancel(false)}
        onConfirm={() => {
          setConfirmingCancel(false);
          void act('cancel')();
        }}
      />
      <Text size="sm" c="dimmed">
        {j.id} · pool {j.pool} · priority {j.priority} · attempt {j.countedAttempts}/{j.maxAttempts}
        {j.attempts !== j.countedAttempts ? ` (${j.attempts} runs)` : ''} · created {ago(j.createdAt)} ·
        started {time(j.startedAt)} · finished {time(j.finishedAt)} · {j.deviceSeconds.toFixed(0)}{' '}
        device-seconds
      </Text>
      {status === 'queued' && (
        <Alert color="gray" data-testid="queue-info">
          {/* A paused job is in no queue: no position, no estimate (a "?" there read as a fault). */}
          {j.pausedAt ? (
            `Paused: ${waitReasonText.paused ?? 'paused'}.`
          ) : (
            <>
              {j.queuePosition != null
                ? `Position ${j.queuePosition} in the queue`
                : 'Not yet ordered in the queue'}
              {noNodeHolds(j) ? (
                '; no start can be estimated: no node of its pool can hold it.'
              ) : (
                <>
                  ; estimated start {j.estimatedStartAt ? ago(j.estimatedStartAt) : 'unknown'}
                  {j.progress.estimatedFinishAt ? `, finish ${ago(j.progress.estimatedFinishAt)}` : ''}
                  {j.waitReason ? ` — ${waitReasonText[j.waitReason] ?? j.waitReason}` : ''}.
                </>
              )}
            </>
          )}
        </Alert>
      )}
      {status === 'queued' && noNodeHolds(j) && <NoNodeHolds job={j} />}
      {j.progress.step !== null && (
        <Text size="sm" data-testid="progress">
          Step {j.progress.step} of {j.progress.steps}
          {status === 'running' && j.progress.estimatedFinishAt
            ? `; estimated finish ${ago(j.progress.estimatedFinishAt)}`
            : ''}
        </Text>
      )}
      {actionError && (
        <Alert color="red" data-testid="action-error">
          {NOT_DONE[actionError.action]}: {actionError.message}
        </Alert>
      )}
      {j.error && <Alert color="red">{j.error}</Alert>}
      <SimpleGrid cols={{ base: 1, md: 2 }}>
        {CURVES.map((c) => {
          const d = byName.get(c.name) ?? { steps: [], values: [] };
          return (
            <MetricChart key={c.name} title={c.name} steps={d.steps} values={d.values} color={c.color} />
          );
        })}
      </SimpleGrid>
      <Card withBorder>
        <Title order={5} mb="xs">
          Checkpoints
        </Title>
        <CheckpointsTable jobName={j.name} checkpoints={checkpoints.data?.data ?? []} />
      </Card>
      <Card withBorder>
        <Title order={5} mb="xs">
          Events
        </Title>
        <Table.ScrollContainer minWidth={480} mah={360}>
          <Table data-testid="events-table">
            <Table.Tbody>
              {[...events].reverse().map((e) => (
                <Table.Tr key={e.id}>
                  <Table.Td>{time(e.createdAt)}</Table.Td>
                  <Table.Td>{e.type}</Table.Td>
                  <Table.Td>
                    <Text size="xs" ff="monospace" style={{ wordBreak: 'break-all' }}>
                      {JSON.stringify(e.data)}
                    </Text>
                  </Table.Td>
                </Table.Tr>
              ))}
            </Table.Tbody>
          </Table>
        </Table.ScrollContainer>
      </Card>
    </Stack>
  );
}
