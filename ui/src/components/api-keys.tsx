/**
 * A list of API keys (a tenant's, or the node keys): name, prefix, last use, revocation; a form
 * that creates one (its secret shown once) and a confirmed revoke. The caller says which keys
 * through the three SDK calls; the secret is never listed (the API keeps only its hash).
 */
import { useState, type FormEvent } from 'react';
import { Badge, Button, Card, Group, Stack, Table, Text, TextInput, Title } from '@mantine/core';
import type { components } from '../../../sdk/src/index.js';
import { ago } from '../format.js';
import { fieldError } from '../refusal.js';
import { useAction } from '../use-action.js';
import { usePoll } from '../use-poll.js';
import { ConfirmDialog } from './confirm-dialog.js';
import { Refusal } from './refusal.js';
import { ShownOnce } from './shown-once.js';

type Key = components['schemas']['TenantKey'];

export interface ApiKeysProps {
  title: string;
  /** "API key" or "node key", in the labels and the messages. */
  noun: string;
  /** What revoking stops, for the confirm dialog. */
  revokeEffect: string;
  list: () => Promise<{ data: Key[] }>;
  create: (name: string | undefined) => Promise<{ apiKey: string }>;
  revoke: (id: string) => Promise<unknown>;
  deps: readonly unknown[];
  testId: string;
}

export function ApiKeys(p: ApiKeysProps) {
  const keys = usePoll(p.list, 10_000, p.deps);
  const [name, setName] = useState('');
  const [secret, setSecret] = useState<string | null>(null);
  const [revoking, setRevoking] = useState<Key | null>(null);
  const create = useAction();
  const revoke = useAction();

  const submit = async (e: FormEvent) => {
    e.preventDefault();
    revoke.clear();
    const done = await create.run(async () => setSecret((await p.create(name.trim() || undefined)).apiKey));
    if (done) setName('');
    keys.reload();
  };
  const confirmRevoke = async (key: Key) => {
    setRevoking(null);
    create.clear();
    await revoke.run(() => p.revoke(key.id));
    keys.reload();
  };

  return (
    <Card withBorder data-testid={p.testId}>
      <Stack>
        <Title order={5}>{p.title}</Title>
        {keys.error && <Text c="red">{keys.error.message}</Text>}
        <Table.ScrollContainer minWidth={560}>
          <Table>
            <Table.Thead>
              <Table.Tr>
                <Table.Th>Name</Table.Th>
                <Table.Th>Prefix</Table.Th>
                <Table.Th>Created</Table.Th>
                <Table.Th>Last used</Table.Th>
                <Table.Th>State</Table.Th>
              </Table.Tr>
            </Table.Thead>
            <Table.Tbody>
              {(keys.data?.data ?? []).map((k) => (
                <Table.Tr key={k.id} data-key-prefix={k.prefix} data-revoked={k.revokedAt ? 'true' : 'false'}>
                  <Table.Td>{k.name ?? '–'}</Table.Td>
                  <Table.Td>
                    <Text ff="monospace" size="sm">
                      {k.prefix}…
                    </Text>
                  </Table.Td>
                  <Table.Td>{ago(k.createdAt)}</Table.Td>
                  <Table.Td>{ago(k.lastUsedAt)}</Table.Td>
                  <Table.Td>
                    {k.revokedAt ? (
                      <Badge color="gray" variant="light">
                        revoked {ago(k.revokedAt)}
                      </Badge>
                    ) : (
                      <Button
                        size="xs"
                        color="red"
                        variant="light"
                        loading={revoke.busy}
                        onClick={() => setRevoking(k)}
                        aria-label={`Revoke ${p.noun} ${k.prefix}`}
                      >
                        Revoke
                      </Button>
                    )}
                  </Table.Td>
                </Table.Tr>
              ))}
            </Table.Tbody>
          </Table>
        </Table.ScrollContainer>
        <form onSubmit={submit}>
          <Group align="flex-end" wrap="wrap">
            <TextInput
              label={`New ${p.noun}'s name (optional)`}
              value={name}
              onChange={(e) => setName(e.currentTarget.value)}
              error={fieldError(create.error, 'name')}
              maxLength={64}
              style={{ flex: '1 1 200px' }}
            />
            <Button type="submit" loading={create.busy}>
              Create {p.noun}
            </Button>
          </Group>
        </form>
        <Refusal error={create.error} notDone="Not created" fields={['name']} />
        <Refusal error={revoke.error} notDone="Not revoked" />
        {secret && <ShownOnce label={`new ${p.noun}`} value={secret} onDone={() => setSecret(null)} />}
      </Stack>
      <ConfirmDialog
        opened={revoking !== null}
        title={`Revoke ${p.noun} ${revoking?.prefix ?? ''}…?`}
        body={[p.revokeEffect, 'A revoked key cannot be restored: its holder needs a new one.']}
        keepLabel="Keep the key"
        confirmLabel="Revoke the key"
        onKeep={() => setRevoking(null)}
        onConfirm={() => revoking && void confirmRevoke(revoking)}
      />
    </Card>
  );
}
