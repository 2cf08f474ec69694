/** Admin: the pools, each linking to its page (device-lock timeline and queue). */
import { Anchor, Stack, Table, Text, Title } from '@mantine/core';
import { Link } from 'wouter';
import { unwrap } from '../../../sdk/src/index.js';
import { useApi } from '../api-context.js';
import { usePoll } from '../use-poll.js';

export function PoolsView() {
  const { client } = useApi();
  const pools = usePoll(
    () => unwrap(client.GET('/v1/pools', { params: { query: { limit: 100 } } })),
    10_000,
    [client],
  );
  return (
    <Stack>
      <Title order={3}>Pools</Title>
      {pools.error && <Text c="red">{pools.error.message}</Text>}
      <Table.ScrollContainer minWidth={400}>
        <Table data-testid="pools-table">
          <Table.Thead>
            <Table.Tr>
              <Table.Th>Pool</Table.Th>
              <Table.Th>Device type</Table.Th>
              <Table.Th>Nodes</Table.Th>
              <Table.Th>Devices</Table.Th>
            </Table.Tr>
          </Table.Thead>
          <Table.Tbody>
            {(pools.data?.data ?? []).map((p) => (
              <Table.Tr key={p.id}>
                <Table.Td>
                  <Anchor component={Link} href={`/pools/${encodeURIComponent(p.name)}`}>
                    {p.name}
                  </Anchor>
                </Table.Td>
                <Table.Td>{p.deviceType}</Table.Td>
                <Table.Td>{p.nodes}</Table.Td>
                <Table.Td>{p.devices}</Table.Td>
              </Table.Tr>
            ))}
          </Table.Tbody>
        </Table>
      </Table.ScrollContainer>
    </Stack>
  );
}
