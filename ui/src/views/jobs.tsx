/**
 * The tenant's jobs, newest first. The list is re-read every few seconds; the newest unfinished
 * jobs also follow their event streams (SSE), so their status changes show the moment they happen.
 * Only a few streams are opened: browsers allow six connections per origin over HTTP/1.1.
 */
import { useEffect, useMemo, useState } from 'react';
import { Anchor, Button, Group, Stack, Table, Text, Title } from '@mantine/core';
import { Link, useLocation } from 'wouter';
import { unwrap, type Job } from '../../../sdk/src/index.js';
import { useApi } from '../api-context.js';
import { followJobEvents, statusOf } from '../job-stream.js';
import { usePoll } from '../use-poll.js';
import { ago, finalStatuses, waitReasonText } from '../format.js';
import { StatusBadge } from '../components/status-badge.js';
import { SubmitJob } from './submit-job.js';

const LIVE_STREAMS = 4;

function useLiveStatuses(ids: string[]): Map<string, string> {
  const { client } = useApi();
  const [live, setLive] = useState(new Map<string, string>());
  const key = ids.join(',');
  useEffect(() => {
    const abort = new AbortController();
    for (const id of key ? key.split(',') : []) {
      void followJobEvents(
        client,
        id,
        (e) => {
          const s = statusOf(e);
          if (s) setLive((prev) => new Map(prev).set(id, s));
        },
        abort.signal,
      );
    }
    return () => abort.abort();
  }, [client, key]);
  return live;
}

function QueueInfo({ job }: { job: Job }) {
  if (job.status !== 'queued') return <Text size="sm">–</Text>;
  return (
    <Text size="sm">
      #{job.queuePosition ?? '?'} · start {job.estimatedStartAt ? ago(job.estimatedStartAt) : 'unknown'}
      {job.waitReason && (
        <Text span size="xs" c="dimmed" display="block">
          {waitReasonText[job.waitReason] ?? job.waitReason}
        </Text>
      )}
    </Text>
  );
}

export function JobsView() {
  const { client } = useApi();
  const [, navigate] = useLocation();
  const [submitting, setSubmitting] = useState(false);
  const jobs = usePoll(() => unwrap(client.GET('/v1/jobs', { params: { query: { limit: 50 } } })), 5000, [
    client,
  ]);
  const rows = jobs.data?.data ?? [];
  const followed = useMemo(
    () =>
      rows
        .filter((j) => !finalStatuses.has(j.status))
        .slice(0, LIVE_STREAMS)
        .map((j) => j.id),
    [rows],
  );
  const live = useLiveStatuses(followed);

  return (
    <Stack>
      <Group justify="space-between">
        <Title order={3}>Jobs</Title>
        <Button onClick={() => setSubmitting(true)} data-testid="open-submit">
          Submit a job
        </Button>
      </Group>
      {jobs.error && <Text c="red">{jobs.error.message}</Text>}
      <Table.ScrollContainer minWidth={640}>
        <Table striped highlightOnHover data-testid="jobs-table">
          <Table.Thead>
            <Table.Tr>
              <Table.Th>Name</Table.Th>
              <Table.Th>Status</Table.Th>
              <Table.Th>Queue</Table.Th>
              <Table.Th>Pool</Table.Th>
              <Table.Th>Created</Table.Th>
              <Table.Th>Device time</Table.Th>
            </Table.Tr>
          </Table.Thead>
          <Table.Tbody>
            {rows.map((j) => {
              // A stream's status is newer than the list's only while the list has not caught up.
              const status = finalStatuses.has(j.status) ? j.status : (live.get(j.id) ?? j.status);
              return (
                <Table.Tr key={j.id} data-job-id={j.id}>
                  <Table.Td>
                    <Anchor component={Link} href={`/jobs/${j.id}`}>
                      {j.name}
                    </Anchor>
                  </Table.Td>
                  <Table.Td>
                    <StatusBadge status={status} />
                  </Table.Td>
                  <Table.Td>
                    <QueueInfo job={j} />
                  </Table.Td>
                  <Table.Td>{j.pool}</Table.Td>
                  <Table.Td>{ago(j.createdAt)}</Table.Td>
                  <Table.Td>{j.deviceSeconds.toFixed(0)} s</Table.Td>
                </Table.Tr>
              );
            })}
          </Table.Tbody>
        </Table>
      </Table.ScrollContainer>
      {jobs.data && rows.length === 0 && <Text c="dimmed">No jobs yet.</Text>}
      <SubmitJob
        opened={submitting}
        onClose={() => setSubmitting(false)}
        onSubmitted={(job) => {
          setSubmitting(false);
          navigate(`/jobs/${job.id}`);
        }}
      />
    </Stack>
  );
}
