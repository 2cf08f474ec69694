/**
 * Admin: one pool. The nodes an admin cordoned (since when, why); its devices' lock timeline — who held each device, when, in which stage, with
 * every switch between jobs marked — refreshed every two seconds; and its queue in the scheduler's
 * order with positions, estimated starts and wait reasons.
 */
import { useState } from 'react';
import { Alert, Anchor, Card, Group, SegmentedControl, Stack, Table, Text, Title } from '@mantine/core';
import { Link } from 'wouter';
import { unwrap } from '../../../sdk/src/index.js';
import { useApi } from '../api-context.js';
import { usePoll } from '../use-poll.js';
import { ago, waitReasonText } from '../format.js';
import { LockTimeline } from '../components/lock-timeline.js';
import { CordonedNodes } from '../components/cordoned-nodes.js';

// Stages last tenths of a second on small jobs: the shortest window shows each hold.
const WINDOWS = { '20 s': 20_000, '1 min': 60_000, '5 min': 300_000, '15 min': 900_000 } as const;
type WindowName = keyof typeof WINDOWS;

function QueueTable({ pool }: { pool: string }) {
  const { client } = useApi();
  const queue = usePoll(
    () =>
      unwrap(
        client.GET('/v1/pools/{name}/queue', { params: { path: { name: pool }, query: { limit: 100 } } }),
      ),
    3000,
    [client, pool],
  );
  if (queue.error && !queue.data) return <Alert color="red">{queue.error.message}</Alert>;
  const rows = queue.data?.data ?? [];
  return (
    <>
      <Text size="sm" c="dimmed">
        {queue.data?.total ?? 0} {queue.data?.total === 1 ? 'job' : 'jobs'} waiting
      </Text>
      <Table.ScrollContainer minWidth={640}>
        <Table data-testid="queue-table">
          <Table.Thead>
            <Table.Tr>
              <Table.Th>#</Table.Th>
              <Table.Th>Job</Table.Th>
              <Table.Th>Tenant</Table.Th>
              <Table.Th>Tenant position</Table.Th>
              <Table.Th>Priority</Table.Th>
              <Table.Th>Estimated start</Table.Th>
              <Table.Th>Waiting because</Table.Th>
              <Table.Th>Queued</Table.Th>
            </Table.Tr>
          </Table.Thead>
          <Table.Tbody>
            {rows.map((r) => (
              <Table.Tr key={r.jobId}>
                <Table.Td>{r.queuePosition}</Table.Td>
                <Table.Td>{r.name}</Table.Td>
                <Table.Td>{r.tenantName}</Table.Td>
                <Table.Td>{r.tenantQueuePosition}</Table.Td>
                <Table.Td>{r.priority}</Table.Td>
                <Table.Td>{r.estimatedStartAt ? ago(r.estimatedStartAt) : 'unknown'}</Table.Td>
                <Table.Td>{waitReasonText[r.waitReason] ?? r.waitReason}</Table.Td>
                <Table.Td>{ago(r.queuedAt)}</Table.Td>
              </Table.Tr>
            ))}
          </Table.Tbody>
        </Table>
      </Table.ScrollContainer>
    </>
  );
}

/** Holds one poll reads (the API's most). */
const MAX_HOLDS = 10_000;

export function PoolPage({ name }: { name: string }) {
  const { client } = useApi();
  const [span, setSpan] = useState<WindowName>('20 s');
  const timeline = usePoll(
    () =>
      unwrap(
        client.GET('/v1/pools/{name}/timeline', {
          params: { path: { name }, query: { since: Date.now() - WINDOWS[span], limit: MAX_HOLDS } },
        }),
      ),
    2000,
    [client, name, span],
  );
  return (
    <Stack>
      <Anchor component={Link} href="/pools" size="sm">
        ← Pools
      </Anchor>
      <Title order={3}>Pool {name}</Title>
      {timeline.data && <CordonedNodes devices={timeline.data.devices} />}
      <Card withBorder>
        <Group justify="space-between" mb="sm">
          <Title order={5}>Device-lock timeline</Title>
          <SegmentedControl
            size="xs"
            data={Object.keys(WINDOWS)}
            value={span}
            onChange={(v) => setSpan(v as WindowName)}
          />
        </Group>
        {timeline.error && <Alert color="red">{timeline.error.message}</Alert>}
        {timeline.data ? <LockTimeline timeline={timeline.data} /> : <Text>Loading…</Text>}
        {timeline.data?.nextCursor && (
          <Text size="xs" c="dimmed">
            The first {MAX_HOLDS.toLocaleString('en')} holds of this window are shown; a shorter window shows
            its newest.
          </Text>
        )}
      </Card>
      <Card withBorder>
        <Title order={5} mb="xs">
          Queue
        </Title>
        <QueueTable pool={name} />
      </Card>
    </Stack>
  );
}
