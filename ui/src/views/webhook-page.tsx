/**
 * Tenant: one webhook endpoint and its recent deliveries, newest first (GET
 * /v1/webhooks/{id}/deliveries): status, attempts, the receiver's last answer, the next attempt;
 * any one sent again (replay: the same `webhook-id`, so a receiver can tell it has seen it).
 */
import {
  Alert,
  Anchor,
  Badge,
  Button,
  Group,
  SegmentedControl,
  Stack,
  Table,
  Text,
  Title,
} from '@mantine/core';
import { useState } from 'react';
import { Link } from 'wouter';
import { unwrap } from '../../../sdk/src/index.js';
import { useApi } from '../api-context.js';
import { usePoll } from '../use-poll.js';
import { useAction } from '../use-action.js';
import { ago } from '../format.js';
import { Refusal } from '../components/refusal.js';

const deliveryColor: Record<string, string> = { pending: 'yellow', succeeded: 'green', failed: 'red' };
const FILTERS = ['all', 'pending', 'succeeded', 'failed'] as const;

export function WebhookPage({ id }: { id: string }) {
  const { client } = useApi();
  const [filter, setFilter] = useState<(typeof FILTERS)[number]>('all');
  const hooks = usePoll(() => unwrap(client.GET('/v1/webhooks')), 0, [client]);
  const deliveries = usePoll(
    () =>
      unwrap(
        client.GET('/v1/webhooks/{id}/deliveries', {
          params: { path: { id }, query: { limit: 50, ...(filter === 'all' ? {} : { status: filter }) } },
        }),
      ),
    5000,
    [client, id, filter],
  );
  const replay = useAction();
  const [replayed, setReplayed] = useState<string | null>(null);
  const send = async (deliveryId: string) => {
    setReplayed(null);
    const ok = await replay.run(() =>
      unwrap(
        client.POST('/v1/webhooks/{id}/deliveries/{deliveryId}/replay', {
          params: { path: { id, deliveryId } },
        }),
      ),
    );
    if (ok) setReplayed(deliveryId);
    deliveries.reload();
  };
  const hook = hooks.data?.data.find((w) => w.id === id);
  const back = (
    <Anchor component={Link} href="/webhooks" size="sm">
      ← Webhooks
    </Anchor>
  );
  if (hooks.data && !hook)
    return (
      <Stack>
        {back}
        <Alert color="red">No such webhook (deleted, or not yours).</Alert>
      </Stack>
    );
  return (
    <Stack>
      {back}
      <Title order={3} style={{ wordBreak: 'break-all' }}>
        {hook?.url ?? 'Webhook'}
      </Title>
      {hook && (
        <Text size="sm" c="dimmed">
          {hook.events.length ? hook.events.join(', ') : 'every event type'}
          {hook.description ? ` · ${hook.description}` : ''} · created {ago(hook.createdAt)}
        </Text>
      )}
      <Group justify="space-between">
        <Title order={5}>Recent deliveries</Title>
        <SegmentedControl
          size="xs"
          aria-label="Delivery status"
          data={[...FILTERS]}
          value={filter}
          onChange={(v) => setFilter(v as (typeof FILTERS)[number])}
        />
      </Group>
      {deliveries.error && <Text c="red">{deliveries.error.message}</Text>}
      <Refusal error={replay.error} notDone="Not sent again" />
      {replayed && (
        <Text size="sm" c="green" data-testid="replayed">
          Queued to be sent again, with the same webhook-id.
        </Text>
      )}
      <Table.ScrollContainer minWidth={720}>
        <Table data-testid="deliveries-table">
          <Table.Thead>
            <Table.Tr>
              <Table.Th>Event</Table.Th>
              <Table.Th>Status</Table.Th>
              <Table.Th>Attempts</Table.Th>
              <Table.Th>Last answer</Table.Th>
              <Table.Th>Next attempt</Table.Th>
              <Table.Th>Created</Table.Th>
              <Table.Th />
            </Table.Tr>
          </Table.Thead>
          <Table.Tbody>
            {(deliveries.data?.data ?? []).map((d) => (
              <Table.Tr key={d.id} data-delivery-id={d.id} data-status={d.status}>
                <Table.Td>
                  {d.eventType}{' '}
                  <Text span size="xs" c="dimmed">
                    #{d.eventId}
                  </Text>
                </Table.Td>
                <Table.Td>
                  <Badge color={deliveryColor[d.status] ?? 'gray'} variant="light">
                    {d.status}
                  </Badge>
                </Table.Td>
                <Table.Td>{d.attempts}</Table.Td>
                <Table.Td>
                  {d.lastStatusCode ?? ''} {d.lastError ?? (d.lastStatusCode === null ? '–' : '')}
                </Table.Td>
                <Table.Td>{ago(d.nextAttemptAt)}</Table.Td>
                <Table.Td>{ago(d.createdAt)}</Table.Td>
                <Table.Td>
                  <Button
                    size="xs"
                    variant="light"
                    loading={replay.busy}
                    onClick={() => void send(d.id)}
                    aria-label={`Send ${d.eventType} #${d.eventId} again`}
                  >
                    Replay
                  </Button>
                </Table.Td>
              </Table.Tr>
            ))}
          </Table.Tbody>
        </Table>
      </Table.ScrollContainer>
      {deliveries.data?.data.length === 0 && <Text c="dimmed">No deliveries yet.</Text>}
    </Stack>
  );
}
