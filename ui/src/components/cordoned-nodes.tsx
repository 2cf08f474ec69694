/**
 * The nodes of a pool an admin cordoned (POST /v1/nodes/{id}/cordon), from its timeline's devices:
 * which, since when, why, and whether their jobs are being evicted. Without it an admin looking at
 * a pool could not tell why its devices took nothing new; the nodes page is where cordons change.
 */
import { Anchor, Badge, Group, Stack, Text } from '@mantine/core';
import { Link } from 'wouter';
import type { components } from '../../../sdk/src/index.js';
import { ago, time } from '../format.js';

type Device = components['schemas']['PoolDevice'];
type Cordon = NonNullable<components['schemas']['NodeCordon']>;

/** The words and colour of a cordon, the same wherever a cordon is shown. */
export const cordonBadge = (c: Cordon) =>
  c.evict ? { label: 'cordoned, draining', color: 'orange' } : { label: 'cordoned', color: 'yellow' };

export function CordonedNodes({ devices }: { devices: readonly Device[] }) {
  const nodes = new Map<string, { name: string; cordon: Cordon }>();
  for (const d of devices) if (d.nodeCordon) nodes.set(d.node, { name: d.nodeName, cordon: d.nodeCordon });
  if (nodes.size === 0) return null;
  return (
    <Stack gap={4} data-testid="cordoned-nodes">
      {[...nodes.entries()].map(([id, { name, cordon }]) => {
        const badge = cordonBadge(cordon);
        return (
          <Group key={id} gap={6} data-testid="cordoned-node" data-node-id={id}>
            <Text size="sm" fw={500}>
              {name}
            </Text>
            <Badge color={badge.color} variant="light">
              {badge.label}
            </Badge>
            <Text size="sm" c="dimmed" title={new Date(cordon.cordonedAt).toLocaleString()}>
              since {time(cordon.cordonedAt)} ({ago(cordon.cordonedAt)})
            </Text>
            {cordon.reason && (
              <Text size="sm" data-testid="cordoned-node-reason">
                — {cordon.reason}
              </Text>
            )}
          </Group>
        );
      })}
      <Anchor component={Link} href="/nodes" size="xs">
        Uncordon on the nodes page
      </Anchor>
    </Stack>
  );
}
