/**
 * Admin: one tenant — its fair-share weight and quota, edited, and its API keys (created with the
 * secret shown once, revoked once confirmed).
 */
import { Alert, Anchor, Card, Stack, Text, Title } from '@mantine/core';
import { Link } from 'wouter';
import { unwrap } from '../../../sdk/src/index.js';
import { useApi } from '../api-context.js';
import { usePoll } from '../use-poll.js';
import { ago } from '../format.js';
import { ApiKeys } from '../components/api-keys.js';
import { QuotaForm } from '../components/quota-form.js';
import { WeightForm } from '../components/weight-form.js';

const BackToTenants = () => (
  <Anchor component={Link} href="/tenants" size="sm">
    ← Tenants
  </Anchor>
);

export function TenantPage({ id }: { id: string }) {
  const { client } = useApi();
  const tenant = usePoll(() => unwrap(client.GET('/v1/tenants/{id}', { params: { path: { id } } })), 0, [
    client,
    id,
  ]);
  if (tenant.error && !tenant.data)
    return (
      <Stack>
        <BackToTenants />
        <Alert color="red">{tenant.error.message}</Alert>
      </Stack>
    );
  const t = tenant.data;
  if (!t) return <Text>Loading…</Text>;
  const path = { params: { path: { id } } };
  return (
    <Stack>
      <BackToTenants />
      <Title order={3}>{t.name}</Title>
      <Text size="sm" c="dimmed">
        {t.id} · created {ago(t.createdAt)}
      </Text>
      <Card withBorder>
        <WeightForm tenantId={t.id} weight={t.weight} />
      </Card>
      <Card withBorder>
        <Title order={5} mb="xs">
          Quota
        </Title>
        <QuotaForm tenantId={t.id} quota={t.quota} />
      </Card>
      <ApiKeys
        title="API keys"
        noun="API key"
        testId="tenant-keys"
        revokeEffect={`It can no longer be exchanged for a token, so ${t.name}'s programs using it stop once the tokens they hold expire.`}
        list={() =>
          unwrap(client.GET('/v1/tenants/{id}/keys', { params: { path: { id }, query: { limit: 100 } } }))
        }
        create={(name) =>
          unwrap(client.POST('/v1/tenants/{id}/keys', { ...path, body: name ? { name } : {} }))
        }
        revoke={(keyId) =>
          unwrap(client.DELETE('/v1/tenants/{id}/keys/{keyId}', { params: { path: { id, keyId } } }))
        }
        deps={[client, id]}
      />
    </Stack>
  );
}
