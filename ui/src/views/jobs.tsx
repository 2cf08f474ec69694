/**
 * The tenant's jobs, newest first, a page of 50 at a time (older pages by the API's cursor), of every
 * status or of one. The page is re-read every few seconds; its newest unfinished jobs also follow
 * their event streams (SSE), so their status changes show the moment they happen. Only a few
 * streams are opened: browsers allow six connections per origin over HTTP/1.1.
 */
import { useEffect, useMemo, useState } from 'react';
import { Anchor, Button, Group, Select, Stack, Table, Text, Title } from '@mantine/core';
import { Link, useLocation } from 'wouter';
import { unwrap, type Job } from '../../../sdk/src/index.js';
import { useApi } from '../api-context.js';
import { followJobEvents, statusOf } from '../job-stream.js';
import { usePoll } from '../use-poll.js';
import { ago, finalStatuses, noNodeHolds, waitReasonText } from '../format.js';
import { StatusBadge } from '../components/status-badge.js';
import { SubmitJob } from './submit-job.js';

const LIVE_STREAMS = 4;
const PAGE = 50;
const STATUSES: Job['status'][] = ['queued', 'placed', 'running', 'succeeded', 'failed', 'cancelled'];

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
  if (noNodeHolds(job))
    return (
      <Text size="sm" c="orange" data-testid="queue-no-node">
        {job.queuePosition != null ? `#${job.queuePosition} · ` : ''}no node of its pool can hold it
      </Text>
    );
  return (
    <Text size="sm">
      {job.pausedAt
        ? 'paused'
        : `${job.queuePosition != null ? `#${job.queuePosition}` : 'not yet ordered'} · start ${
            job.estimatedStartAt ? ago(job.estimatedStartAt) : 'unknown'
          }`}
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
  const [status, setStatus] = useState<Job['status'] | null>(null);
  // The cursors of the pages after the first that were opened, newest first: "Newer" goes back one.
  // The newest 50 were all the list showed: an older job could not be reached.
  const [cursors, setCursors] = useState<string[]>([]);
  const after = cursors[cursors.length - 1];
  const jobs = usePoll(
    () =>
      unwrap(
        client.GET('/v1/jobs', { params: { query: { limit: PAGE, after, status: status ?? undefined } } }),
      ),
    5000,
    [client, after, status],
  );
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
        <Group>
          <Select
            aria-label="Status"
            placeholder="every status"
            data={STATUSES}
            value={status}
            clearable
            data-testid="status-filter"
            onChange={(v) => {
              setStatus(v as Job['status'] | null);
              setCursors([]);
            }}
          />
          <Button onClick={() => setSubmitting(true)} data-testid="open-submit">
            Submit a job
          </Button>
        </Group>
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
      {jobs.data && rows.length === 0 && (
        <Text c="dimmed">
          {status ? `No ${status} jobs.` : cursors.length ? 'No older jobs.' : 'No jobs yet.'}
        </Text>
      )}
      {(cursors.length > 0 || jobs.data?.nextCursor) && (
        <Group justify="flex-end">
          {cursors.length > 0 && (
            <Button
              variant="subtle"
              data-testid="newer-jobs"
              onClick={() => setCursors((c) => c.slice(0, -1))}
            >
              Newer
            </Button>
          )}
          {jobs.data?.nextCursor && (
            <Button
              variant="subtle"
              data-testid="older-jobs"
              onClick={() => setCursors((c) => [...c, jobs.data!.nextCursor!])}
            >
              Older
            </Button>
          )}
        </Group>
      )}
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
