/**
 * Asks before something that cannot be undone (cancelling a job, revoking a key, deleting a
 * webhook, releasing a node) or that takes a node out of service (cordoning or draining it): one
 * stray click on the job page ended a run. A Mantine modal (a
 * labelled dialog that keeps focus inside and closes on Escape) saying what the action does;
 * closing it any way but the red button keeps things as they are.
 */
import type { ReactNode } from 'react';
import { Button, Group, Modal, Stack, Text } from '@mantine/core';

export interface ConfirmDialogProps {
  opened: boolean;
  /** The question, e.g. "Cancel my-run?": the dialog's accessible name. */
  title: string;
  /** What the action does, a paragraph each. */
  body: readonly string[];
  keepLabel: string;
  confirmLabel: string;
  onKeep: () => void;
  onConfirm: () => void;
  confirmTestId?: string;
  /** Below the paragraphs: what the action may take besides (e.g. a reason). */
  children?: ReactNode;
}

export function ConfirmDialog(p: ConfirmDialogProps) {
  return (
    <Modal
      opened={p.opened}
      onClose={p.onKeep}
      title={p.title}
      centered
      closeButtonProps={{ 'aria-label': 'Close' }}
    >
      <Stack gap="xs">
        {p.body.map((text) => (
          <Text key={text} size="sm">
            {text}
          </Text>
        ))}
        {p.children}
      </Stack>
      <Group justify="flex-end" mt="md">
        {/* Focused first, so that Enter keeps things too. */}
        <Button variant="default" onClick={p.onKeep} data-autofocus>
          {p.keepLabel}
        </Button>
        <Button color="red" onClick={p.onConfirm} data-testid={p.confirmTestId}>
          {p.confirmLabel}
        </Button>
      </Group>
    </Modal>
  );
}
