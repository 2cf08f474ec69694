/**
 * A node's cordon on the admin's nodes page (POST /v1/nodes/{id}/cordon, /uncordon): the flag with
 * since when and the admin's reason, and Cordon, Drain (cordon with eviction) and Uncordon. Cordon and Drain ask
 * first in the confirm dialog, saying what they do to the node's jobs, and take an optional reason;
 * Uncordon undoes them and asks nothing.
 */
import { useState } from 'react';
import { Badge, Button, Group, Stack, Text, TextInput } from '@mantine/core';
import { unwrap, type components } from '../../../sdk/src/index.js';
import { useApi } from '../api-context.js';
import { useAction } from '../use-action.js';
import { ConfirmDialog } from './confirm-dialog.js';
import { Refusal } from './refusal.js';
import { cordonBadge } from './cordoned-nodes.js';
import { ago } from '../format.js';

type Node = components['schemas']['Node'];

/** What each asks in its dialog (docs/api.md, POST /v1/nodes/{id}/cordon). */
const EFFECT = {
  cordon: [
    "From the scheduler's next round no new job is placed on the node; the jobs running there keep running.",
    'Uncordon brings it back into service.',
  ],
  drain: [
    "From the scheduler's next round no new job is placed on the node, and every job running there is asked to checkpoint: each returns to the queue and resumes from its checkpoint on another node.",
    'Uncordon brings the node back into service; the jobs stay where they resumed.',
  ],
} as const;

export function NodeCordon({ node, onChanged }: { node: Node; onChanged: () => void }) {
  const { client } = useApi();
  const [asking, setAsking] = useState<'cordon' | 'drain' | null>(null);
  const [reason, setReason] = useState('');
  const action = useAction();
  const path = { params: { path: { id: node.id } } };
  const cordon = async (evict: boolean) => {
    setAsking(null);
    const body = { ...(reason.trim() ? { reason: reason.trim() } : {}), evict };
    if (await action.run(() => unwrap(client.POST('/v1/nodes/{id}/cordon', { ...path, body }))))
      setReason('');
    onChanged();
  };
  const uncordon = async () => {
    await action.run(() => unwrap(client.POST('/v1/nodes/{id}/uncordon', path)));
    onChanged();
  };
  const c = node.cordon;
  return (
    <Stack gap={4} data-testid="node-cordon">
      {c && (
        <Group gap={6}>
          <Badge color={cordonBadge(c).color} variant="light" data-testid="cordon-state">
            {cordonBadge(c).label}
          </Badge>
          <Text
            size="sm"
            c="dimmed"
            title={new Date(c.cordonedAt).toLocaleString()}
            data-testid="cordon-since"
          >
            since {ago(c.cordonedAt)}
          </Text>
          {c.reason && (
            <Text size="sm" c="dimmed" data-testid="cordon-reason">
              {c.reason}
            </Text>
          )}
        </Group>
      )}
      <Group gap={6}>
        {!c && (
          <Button
            size="xs"
            variant="light"
            loading={action.busy}
            onClick={() => setAsking('cordon')}
            aria-label={`Cordon ${node.name}`}
          >
            Cordon
          </Button>
        )}
        {!c?.evict && (
          <Button
            size="xs"
            color="orange"
            variant="light"
            loading={action.busy}
            onClick={() => setAsking('drain')}
            aria-label={`Drain ${node.name}`}
          >
            Drain
          </Button>
        )}
        {c && (
          <Button
            size="xs"
            variant="light"
            loading={action.busy}
            onClick={() => void uncordon()}
            aria-label={`Uncordon ${node.name}`}
          >
            Uncordon
          </Button>
        )}
      </Group>
      <Refusal error={action.error} notDone="Not changed" />
      <ConfirmDialog
        opened={asking !== null}
        title={`${asking === 'drain' ? 'Drain' : 'Cordon'} ${node.name}?`}
        body={EFFECT[asking ?? 'cordon']}
        keepLabel="Keep it in service"
        confirmLabel={asking === 'drain' ? 'Drain the node' : 'Cordon the node'}
        onKeep={() => setAsking(null)}
        onConfirm={() => void cordon(asking === 'drain')}
      >
        <TextInput
          label="Reason (optional)"
          description="Shown with the node"
          maxLength={500}
          value={reason}
          onChange={(e) => setReason(e.currentTarget.value)}
        />
      </ConfirmDialog>
    </Stack>
  );
}
