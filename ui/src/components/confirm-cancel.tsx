/**
 * Asks before a job is cancelled: cancelling cannot be undone, and one stray click on the job page
 * ended a run. A Mantine modal (a labelled dialog that keeps focus inside and closes on Escape);
 * closing it any way but the red button keeps the job.
 */
import { Button, Group, Modal, Text } from '@mantine/core';

export interface ConfirmCancelProps {
  opened: boolean;
  jobName: string;
  onKeep: () => void;
  onCancel: () => void;
}

export function ConfirmCancel({ opened, jobName, onKeep, onCancel }: ConfirmCancelProps) {
  return (
    <Modal opened={opened} onClose={onKeep} title={`Cancel ${jobName}?`} centered>
      <Text size="sm">It stops for good: a cancelled job cannot be resumed (pausing it can be).</Text>
      <Group justify="flex-end" mt="md">
        {/* Focused first, so that Enter keeps the job too. */}
        <Button variant="default" onClick={onKeep} data-autofocus>
          Keep the job
        </Button>
        <Button color="red" onClick={onCancel} data-testid="confirm-cancel">
          Cancel the job
        </Button>
      </Group>
    </Modal>
  );
}
