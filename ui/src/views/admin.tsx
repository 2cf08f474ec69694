/** Admin: tenants with their quotas, and nodes with their devices and last heartbeat. */
import { Badge, Stack, Table, Text, Title } from '@mantine/core';
import { unwrap } from '../../../sdk/src/index.js';
import { useApi } from '../api-context.js';
import { usePoll } from '../use-poll.js';
import { ago, bytes } from '../format.js';

export function TenantsView() {
  const { client } = useApi();
  const tenants = usePoll(
    () => unwrap(client.GET('/v1/tenants', { params: { query: { limit: 100 } } })),
    10_000,
    [client],
  );
  return (
    <Stack>
      <Title order={3}>Tenants</Title>
      {tenants.error && <Text c="red">{tenants.error.message}</Text>}
      <Table.ScrollContainer minWidth={640}>
        <Table data-testid="tenants-table">
          <Table.Thead>
            <Table.Tr>
              <Table.Th>Name</Table.Th>
              <Table.Th>Weight</Table.Th>
              <Table.Th>Max active jobs</Table.Th>
              <Table.Th>Max devices at once</Table.Th>
              <Table.Th>Max devices per job</Table.Th>
              <Table.Th>Device-hours a month (quota)</Table.Th>
              <Table.Th>Created</Table.Th>
            </Table.Tr>
          </Table.Thead>
          <Table.Tbody>
            {(tenants.data?.data ?? []).map((t) => (
              <Table.Tr key={t.id}>
                <Table.Td>{t.name}</Table.Td>
                <Table.Td>{t.weight}</Table.Td>
                <Table.Td>{t.quota.maxActiveJobs}</Table.Td>
                <Table.Td>{t.quota.maxConcurrentDevices}</Table.Td>
                <Table.Td>{t.quota.maxDevicesPerJob}</Table.Td>
                <Table.Td>{t.quota.deviceHoursPerMonth}</Table.Td>
                <Table.Td>{ago(t.createdAt)}</Table.Td>
              </Table.Tr>
            ))}
          </Table.Tbody>
        </Table>
      </Table.ScrollContainer>
    </Stack>
  );
}

const nodeColor: Record<string, string> = { ready: 'green', draining: 'yellow', lost: 'red' };

export function NodesView() {
  const { client } = useApi();
  const nodes = usePoll(() => unwrap(client.GET('/v1/nodes', { params: { query: { limit: 100 } } })), 5000, [
    client,
  ]);
  return (
    <Stack>
      <Title order={3}>Nodes</Title>
      {nodes.error && <Text c="red">{nodes.error.message}</Text>}
      <Table.ScrollContainer minWidth={640}>
        <Table data-testid="nodes-table">
          <Table.Thead>
            <Table.Tr>
              <Table.Th>Name</Table.Th>
              <Table.Th>Pool</Table.Th>
              <Table.Th>Status</Table.Th>
              <Table.Th>Last heartbeat</Table.Th>
              <Table.Th>Devices (free / total memory)</Table.Th>
            </Table.Tr>
          </Table.Thead>
          <Table.Tbody>
            {(nodes.data?.data ?? []).map((n) => (
              <Table.Tr key={n.id}>
                <Table.Td>{n.name}</Table.Td>
                <Table.Td>{n.pool}</Table.Td>
                <Table.Td>
                  <Badge color={nodeColor[n.status] ?? 'gray'} variant="light">
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
              </Table.Tr>
            ))}
          </Table.Tbody>
        </Table>
      </Table.ScrollContainer>
    </Stack>
  );
}
