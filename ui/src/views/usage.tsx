/** The tenant's quota and what this month used of it, its jobs by status, and its share of each pool. */
import { Alert, Card, Progress, SimpleGrid, Stack, Table, Text, Title } from '@mantine/core';
import { unwrap } from '../../../sdk/src/index.js';
import { useApi } from '../api-context.js';
import { usePoll } from '../use-poll.js';
import { JobsByStatus } from '../components/jobs-by-status.js';

function Meter({ label, used, limit, unit }: { label: string; used: number; limit: number; unit: string }) {
  const pct = limit > 0 ? Math.min((used / limit) * 100, 100) : 0;
  return (
    <Card withBorder>
      <Text size="sm" c="dimmed">
        {label}
      </Text>
      <Text fw={600}>
        {Number.isInteger(used) ? used : used.toFixed(2)} / {limit} {unit}
      </Text>
      <Progress value={pct} color={pct > 90 ? 'red' : pct > 70 ? 'yellow' : 'blue'} mt="xs" />
    </Card>
  );
}

export function UsageView() {
  const { client } = useApi();
  const usage = usePoll(() => unwrap(client.GET('/v1/usage')), 10_000, [client]);
  if (usage.error && !usage.data) return <Alert color="red">{usage.error.message}</Alert>;
  const u = usage.data;
  if (!u) return <Text>Loading…</Text>;
  const shares = Object.entries(u.shares ?? {});
  return (
    <Stack data-testid="usage">
      <Title order={3}>Quota and usage</Title>
      <Text size="sm" c="dimmed">
        This period began {new Date(u.periodStart).toLocaleDateString()} (UTC month).
      </Text>
      <SimpleGrid cols={{ base: 1, sm: 2, lg: 3 }}>
        <Meter
          label="Device-hours this month"
          used={u.deviceHoursUsed}
          limit={u.quota.deviceHoursPerMonth}
          unit="h"
        />
        <Meter label="Active jobs" used={u.activeJobs} limit={u.quota.maxActiveJobs} unit="jobs" />
        <Card withBorder>
          <Text size="sm" c="dimmed">
            Jobs now
          </Text>
          <Text fw={600}>
            {u.queuedJobs} queued · {u.runningJobs} running
          </Text>
          <Text size="sm" c="dimmed">
            at most {u.quota.maxConcurrentDevices} devices at once, {u.quota.maxDevicesPerJob} per job
          </Text>
        </Card>
      </SimpleGrid>
      <JobsByStatus usage={u} />
      {shares.length > 0 && (
        <Card withBorder>
          <Title order={5} mb="xs">
            Share of each pool (last scheduling round)
          </Title>
          <Table.ScrollContainer minWidth={480}>
            <Table data-testid="shares-table">
              <Table.Thead>
                <Table.Tr>
                  <Table.Th>Pool</Table.Th>
                  <Table.Th>Share held</Table.Th>
                  <Table.Th>Entitled to</Table.Th>
                  <Table.Th>Devices held</Table.Th>
                  <Table.Th>Devices wanted</Table.Th>
                </Table.Tr>
              </Table.Thead>
              <Table.Tbody>
                {shares.map(([pool, s]) => (
                  <Table.Tr key={pool}>
                    <Table.Td>{pool}</Table.Td>
                    <Table.Td>{(s.share * 100).toFixed(1)}%</Table.Td>
                    <Table.Td>{(s.entitlement * 100).toFixed(1)}%</Table.Td>
                    <Table.Td>{s.devices.toFixed(2)}</Table.Td>
                    <Table.Td>{s.demand}</Table.Td>
                  </Table.Tr>
                ))}
              </Table.Tbody>
            </Table>
          </Table.ScrollContainer>
        </Card>
      )}
    </Stack>
  );
}
