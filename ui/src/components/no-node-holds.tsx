/**
 * Says plainly that a queued job waits for a node its pool does not have (format.ts, noNodeHolds),
 * with what its spec asks for. The API does not say which limit it is over (the devices, or the
 * memory a device its spec or its model needs), nor what the pool's nodes offer (that is the
 * admin's to read), so the causes are named, not guessed between.
 */
import { Alert, Text } from '@mantine/core';
import type { Job } from '../../../sdk/src/index.js';

export function NoNodeHolds({ job }: { job: Job }) {
  const devices = job.spec.resources?.devices ?? 1;
  const memory = job.spec.resources?.memoryPerDeviceMiB;
  return (
    <Alert color="orange" title={`No node of pool ${job.pool} can hold this job`} data-testid="no-node-holds">
      <Text size="sm">
        It asks for {devices} {devices === 1 ? 'device' : 'devices'}. No node of the pool has that many
        devices with the memory the job needs on each
        {memory ? ` (${memory.toLocaleString('en')} MiB, as its spec asks)` : ''}. It stays queued until a
        node that can hold it joins the pool; to run it on the nodes there are, cancel it and submit it asking
        for less.
      </Text>
    </Alert>
  );
}
