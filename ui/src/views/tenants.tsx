/** Admin: tenants with their quotas, each linking to its page (quota and keys); a new tenant. */
import { useState } from 'react';
import { Anchor, Button, Group, Stack, Table, Text, Title } from '@mantine/core';
import { Link } from 'wouter';
import { unwrap } from '../../../sdk/src/index.js';
import { useApi } from '../api-context.js';
import { usePoll } from '../use-poll.js';
import { ago } from '../format.js';
import { CreateTenant } from '../components/create-tenant.js';

export function TenantsView() {
  const { client } = useApi();
  const [creating, setCreating] = useState(false);
  const tenants = usePoll(
    () => unwrap(client.GET('/v1/tenants', { params: { query: { limit: 100 } } })),
    10_000,
    [client],
  );
  return (
    <Stack>
      <Group justify="space-between">
        <Title order={3}>Tenants</Title>
        <Button onClick={() => setCreating(true)}>New tenant</Button>
      </Group>
      <CreateTenant opened={creating} onClose={() => setCreating(false)} onCreated={tenants.reload} />
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
              <Table.Tr key={t.id} data-tenant-id={t.id}>
                <Table.Td>
                  <Anchor component={Link} href={`/tenants/${t.id}`}>
                    {t.name}
                  </Anchor>
                </Table.Td>
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
