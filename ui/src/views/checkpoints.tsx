/**
 * A job's checkpoints, newest first. Download goes through the SDK (the route needs the bearer token, so a plain
 * link cannot fetch it); the file's sha256 is checked against the API's before it is saved, where
 * the browser offers Web Crypto (secure contexts: https or localhost).
 */
import { useMemo, useState } from 'react';
import { Button, Code, Table, Text } from '@mantine/core';
import { TimeshareError, type Checkpoint } from '../../../sdk/src/index.js';
import { useApi } from '../api-context.js';
import { bytes, time } from '../format.js';

async function sha256Hex(blob: Blob): Promise<string | null> {
  if (!globalThis.crypto?.subtle) return null;
  const digest = await crypto.subtle.digest('SHA-256', await blob.arrayBuffer());
  return [...new Uint8Array(digest)].map((b) => b.toString(16).padStart(2, '0')).join('');
}

function DownloadButton({ jobName, checkpoint }: { jobName: string; checkpoint: Checkpoint }) {
  const { client } = useApi();
  const [state, setState] = useState<string>();
  const download = async () => {
    setState('downloading…');
    try {
      const { data, error, response } = await client.GET('/v1/jobs/{id}/checkpoints/{checkpointId}/content', {
        params: { path: { id: checkpoint.jobId, checkpointId: checkpoint.id } },
        parseAs: 'blob',
      });
      if (!response.ok || !data) throw TimeshareError.from(response.status, error);
      const sum = await sha256Hex(data);
      if (sum !== null && sum !== checkpoint.sha256) throw new Error(`sha256 mismatch: got ${sum}`);
      const url = URL.createObjectURL(data);
      const a = document.createElement('a');
      a.href = url;
      a.download = `${jobName}-step${checkpoint.step}.safetensors`;
      a.click();
      setTimeout(() => URL.revokeObjectURL(url), 10_000);
      setState(sum === null ? 'saved (not verified: no Web Crypto here)' : 'saved, sha256 verified');
    } catch (err) {
      setState((err as Error).message);
    }
  };
  return (
    <>
      <Button size="xs" variant="light" onClick={download} data-testid="download-checkpoint">
        Download
      </Button>
      {state && (
        <Text size="xs" c="dimmed" data-testid="download-state">
          {state}
        </Text>
      )}
    </>
  );
}

export function CheckpointsTable({ jobName, checkpoints }: { jobName: string; checkpoints: Checkpoint[] }) {
  // Newest first: the newest is the one people download (the API lists them oldest first).
  const newestFirst = useMemo(
    () => [...checkpoints].sort((a, b) => b.step - a.step || b.createdAt.localeCompare(a.createdAt)),
    [checkpoints],
  );
  if (!checkpoints.length) return <Text c="dimmed">No checkpoints yet.</Text>;
  return (
    <Table.ScrollContainer minWidth={560}>
      <Table data-testid="checkpoints-table">
        <Table.Thead>
          <Table.Tr>
            <Table.Th>Step</Table.Th>
            <Table.Th>Size</Table.Th>
            <Table.Th>sha256</Table.Th>
            <Table.Th>Written</Table.Th>
            <Table.Th />
          </Table.Tr>
        </Table.Thead>
        <Table.Tbody>
          {newestFirst.map((c) => (
            <Table.Tr key={c.id}>
              <Table.Td>{c.step}</Table.Td>
              <Table.Td>{bytes(c.sizeBytes)}</Table.Td>
              <Table.Td>
                <Code>{c.sha256.slice(0, 16)}…</Code>
              </Table.Td>
              <Table.Td>{time(c.createdAt)}</Table.Td>
              <Table.Td>
                <DownloadButton jobName={jobName} checkpoint={c} />
              </Table.Td>
            </Table.Tr>
          ))}
        </Table.Tbody>
      </Table>
    </Table.ScrollContainer>
  );
}
