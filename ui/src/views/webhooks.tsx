/**
 * Tenant: its webhook endpoints (URL, event types, description), each linking to its deliveries;
 * a new one (its signing secret shown once), and deleting one once confirmed.
 */
import { useState } from 'react';
import { Anchor, Button, Group, Stack, Table, Text, Title } from '@mantine/core';
import { Link } from 'wouter';
import { unwrap } from '../../../sdk/src/index.js';
import { useApi } from '../api-context.js';
import { usePoll } from '../use-poll.js';
import { useAction } from '../use-action.js';
import { ago } from '../format.js';
import { ConfirmDialog } from '../components/confirm-dialog.js';
import { CreateWebhook } from '../components/create-webhook.js';
import { Refusal } from '../components/refusal.js';

export function WebhooksView() {
  const { client } = useApi();
  const hooks = usePoll(() => unwrap(client.GET('/v1/webhooks')), 10_000, [client]);
  const [creating, setCreating] = useState(false);
  const [deleting, setDeleting] = useState<{ id: string; url: string } | null>(null);
  const remove = useAction();
  const confirmDelete = async (id: string) => {
    setDeleting(null);
    await remove.run(() => unwrap(client.DELETE('/v1/webhooks/{id}', { params: { path: { id } } })));
    hooks.reload();
  };
  return (
    <Stack>
      <Group justify="space-between">
        <Title order={3}>Webhooks</Title>
        <Button onClick={() => setCreating(true)}>New webhook</Button>
      </Group>
      <Text size="sm" c="dimmed">
        Your jobs&apos; events are POSTed to each endpoint, signed with its secret (Standard Webhooks), at
        least once.
      </Text>
      <CreateWebhook opened={creating} onClose={() => setCreating(false)} onCreated={hooks.reload} />
      {hooks.error && <Text c="red">{hooks.error.message}</Text>}
      <Refusal error={remove.error} notDone="Not deleted" />
      <Table.ScrollContainer minWidth={640}>
        <Table data-testid="webhooks-table">
          <Table.Thead>
            <Table.Tr>
              <Table.Th>URL</Table.Th>
              <Table.Th>Event types</Table.Th>
              <Table.Th>Description</Table.Th>
              <Table.Th>Created</Table.Th>
              <Table.Th />
            </Table.Tr>
          </Table.Thead>
          <Table.Tbody>
            {(hooks.data?.data ?? []).map((w) => (
              <Table.Tr key={w.id} data-webhook-id={w.id}>
                <Table.Td style={{ wordBreak: 'break-all' }}>
                  <Anchor component={Link} href={`/webhooks/${w.id}`}>
                    {w.url}
                  </Anchor>
                </Table.Td>
                <Table.Td>{w.events.length ? w.events.join(', ') : 'all'}</Table.Td>
                <Table.Td>{w.description ?? '–'}</Table.Td>
                <Table.Td>{ago(w.createdAt)}</Table.Td>
                <Table.Td>
                  <Button
                    size="xs"
                    color="red"
                    variant="light"
                    loading={remove.busy}
                    onClick={() => setDeleting({ id: w.id, url: w.url })}
                    aria-label={`Delete the webhook to ${w.url}`}
                  >
                    Delete
                  </Button>
                </Table.Td>
              </Table.Tr>
            ))}
          </Table.Tbody>
        </Table>
      </Table.ScrollContainer>
      {hooks.data?.data.length === 0 && <Text c="dimmed">No webhooks yet.</Text>}
      <ConfirmDialog
        opened={deleting !== null}
        title="Delete this webhook?"
        body={[
          `Deliveries to ${deleting?.url ?? ''} stop at once, and its delivery records are deleted with it.`,
          'Its secret goes too: a new webhook gets a new one.',
        ]}
        keepLabel="Keep the webhook"
        confirmLabel="Delete the webhook"
        onKeep={() => setDeleting(null)}
        onConfirm={() => deleting && void confirmDelete(deleting.id)}
      />
    </Stack>
  );
}
