/** The tenant's quota and what this month used of it, and its share of each pool. */
import { Alert, Card, Group, Progress, SimpleGrid, Stack, Text, Title } from '@mantine/core';
import { unwrap } from '../../../sdk/src/index.js';
import { useApi } from '../api-context.js';
import { usePoll } from '../use-poll.js';

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
      {shares.length > 0 && (
        <Card withBorder>
          <Title order={5}>Share of each pool (last scheduling round)</Title>
          {shares.map(([pool, share]) => (
            <Group key={pool} justify="space-between">
              <Text>{pool}</Text>
              <Text ff="monospace">{JSON.stringify(share)}</Text>
            </Group>
          ))}
        </Card>
      )}
    </Stack>
  );
}
