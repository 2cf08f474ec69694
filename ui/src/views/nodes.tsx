/**
 * Admin: nodes with their devices and last heartbeat, each cordoned, drained or uncordoned
 * (node-cordon.tsx) and releasable once confirmed; the node keys worker daemons register with
 * (created with the secret shown once, revoked once confirmed).
 */
import { useState } from 'react';
import { Badge, Button, Stack, Table, Text, Title } from '@mantine/core';
import { unwrap } from '../../../sdk/src/index.js';
import { useApi } from '../api-context.js';
import { usePoll } from '../use-poll.js';
import { useAction } from '../use-action.js';
import { ago, bytes } from '../format.js';
import { ApiKeys } from '../components/api-keys.js';
import { ConfirmDialog } from '../components/confirm-dialog.js';
import { NodeCordon } from '../components/node-cordon.js';
import { Refusal } from '../components/refusal.js';

const nodeColor: Record<string, string> = { ready: 'green', draining: 'yellow', lost: 'red' };

/** What releasing does (docs/api.md, POST /v1/nodes/{id}/release), and how it differs from a drain. */
const RELEASE_EFFECT = [
  'Releasing unbinds the node from the node key that registered it: that key can no longer act for it, and the node is lost until a daemon registers it again: its own daemon does so once the node has been silent for the node timeout, and its jobs are requeued.',
  'Its jobs go back to the queue once the node has been silent for the node timeout, so that a job never runs beside its requeued self; they restart from their last checkpoint.',
  'To move jobs off a node without fencing it, use Drain instead: as stopping its daemon does, it drains the node (its jobs checkpoint and move to other nodes at once), and it keeps new jobs off until uncordoned.',
];

export function NodesView() {
  const { client } = useApi();
  const nodes = usePoll(() => unwrap(client.GET('/v1/nodes', { params: { query: { limit: 100 } } })), 5000, [
    client,
  ]);
  const [releasing, setReleasing] = useState<{ id: string; name: string } | null>(null);
  const release = useAction();
  const confirmRelease = async (id: string) => {
    setReleasing(null);
    await release.run(() => unwrap(client.POST('/v1/nodes/{id}/release', { params: { path: { id } } })));
    nodes.reload();
  };
  return (
    <Stack>
      <Title order={3}>Nodes</Title>
      {nodes.error && <Text c="red">{nodes.error.message}</Text>}
      <Refusal error={release.error} notDone="Not released" />
      <Table.ScrollContainer minWidth={880}>
        <Table data-testid="nodes-table">
          <Table.Thead>
            <Table.Tr>
              <Table.Th>Name</Table.Th>
              <Table.Th>Pool</Table.Th>
              <Table.Th>Status</Table.Th>
              <Table.Th>Last heartbeat</Table.Th>
              <Table.Th>Devices (free / total memory)</Table.Th>
              <Table.Th>Cordon</Table.Th>
              <Table.Th>Key</Table.Th>
            </Table.Tr>
          </Table.Thead>
          <Table.Tbody>
            {(nodes.data?.data ?? []).map((n) => (
              <Table.Tr key={n.id} data-node-id={n.id}>
                <Table.Td>{n.name}</Table.Td>
                <Table.Td>{n.pool}</Table.Td>
                <Table.Td>
                  <Badge color={nodeColor[n.status] ?? 'gray'} variant="light" data-testid="node-status">
                    {n.status}
                  </Badge>
                </Table.Td>
                <Table.Td>{ago(n.lastHeartbeatAt)}</Table.Td>
                <Table.Td>
                  {n.devices.map((d) => (
                    <Text key={d.index} size="sm">
                      {d.index}: {d.kind}, {bytes(d.freeMemoryBytes)} / {bytes(d.memoryBytes)}, {d.threads}{' '}
                      threads
                    </Text>
                  ))}
                </Table.Td>
                <Table.Td>
                  <NodeCordon node={n} onChanged={nodes.reload} />
                </Table.Td>
                <Table.Td>
                  <Button
                    size="xs"
                    color="red"
                    variant="light"
                    loading={release.busy}
                    onClick={() => setReleasing({ id: n.id, name: n.name })}
                    aria-label={`Release ${n.name}`}
                  >
                    Release
                  </Button>
                </Table.Td>
              </Table.Tr>
            ))}
          </Table.Tbody>
        </Table>
      </Table.ScrollContainer>
      <ConfirmDialog
        opened={releasing !== null}
        title={`Release ${releasing?.name ?? 'the node'}?`}
        body={RELEASE_EFFECT}
        keepLabel="Keep it bound"
        confirmLabel="Release the node"
        onKeep={() => setReleasing(null)}
        onConfirm={() => releasing && void confirmRelease(releasing.id)}
      />
      <ApiKeys
        title="Node keys"
        noun="node key"
        testId="node-keys"
        revokeEffect="It can no longer be exchanged for a token: no daemon can register a node with it, and a node it registered is cut off once the token its daemon holds expires (release the node to cut it off at once)."
        list={() => unwrap(client.GET('/v1/node-keys', { params: { query: { limit: 100 } } }))}
        create={(name) => unwrap(client.POST('/v1/node-keys', { body: name ? { name } : {} }))}
        revoke={(id) => unwrap(client.DELETE('/v1/node-keys/{id}', { params: { path: { id } } }))}
        deps={[client]}
      />
    </Stack>
  );
}
