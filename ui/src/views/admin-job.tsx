/**
 * Admin: a job's address (a link a tenant shared, say). The API lets only a job's own tenant read it
 * (GET /v1/jobs/{id} and what hangs under it take tenant credentials), so there is no job page for
 * the admin, and the admin's views link to none; this says so instead of sending the address back
 * to the pools without a word.
 */
import { Alert, Anchor, Code, Stack, Text } from '@mantine/core';
import { Link } from 'wouter';

export function AdminJobNotice({ id }: { id: string }) {
  return (
    <Stack>
      <Anchor component={Link} href="/pools" size="sm">
        ← Pools
      </Anchor>
      <Alert color="gray" title="A job's page is for its tenant" data-testid="admin-job">
        <Text size="sm">
          The API lets only the tenant that submitted job <Code>{id}</Code> read it, its curves, events and
          checkpoints. As the admin you see it in its pool's queue while it waits and on the pool's
          device-lock timeline while it holds devices.
        </Text>
      </Alert>
    </Stack>
  );
}
