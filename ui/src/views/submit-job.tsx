/**
 * Submitting a job: the spec as JSON (the same document `timeshare submit` takes), starting from
 * the minimal one. A refused spec shows the API's message and the field it names.
 */
import { useEffect, useState } from 'react';
import { Alert, Button, Group, Modal, Stack, Textarea } from '@mantine/core';
import { TimeshareError, unwrap, type Job, type JobSpec } from '../../../sdk/src/index.js';
import { useApi } from '../api-context.js';

const EXAMPLE = {
  name: 'addition-run',
  workflow: { task: { name: 'addition', digits: 2 }, model: { preset: 'tiny' }, steps: 100 },
};

export function SubmitJob({
  opened,
  onClose,
  onSubmitted,
}: {
  opened: boolean;
  onClose: () => void;
  onSubmitted: (job: Job) => void;
}) {
  const { client } = useApi();
  const [text, setText] = useState(JSON.stringify(EXAMPLE, null, 2));
  const [error, setError] = useState<string>();
  const [busy, setBusy] = useState(false);

  // Opened again, the dialog starts clean: the last refusal stayed under a spec it no longer described.
  useEffect(() => {
    if (opened) setError(undefined);
  }, [opened]);

  const submit = async () => {
    setError(undefined);
    let spec: JobSpec;
    try {
      spec = JSON.parse(text) as JobSpec;
    } catch (err) {
      setError(`not JSON: ${(err as Error).message}`);
      return;
    }
    setBusy(true);
    try {
      const job = await unwrap(client.POST('/v1/jobs', { body: spec }));
      onSubmitted(job);
    } catch (err) {
      const e = err as TimeshareError;
      // Validation messages already name their field ("workflow.task.name: …").
      setError(e.param && !e.message.startsWith(e.param) ? `${e.param}: ${e.message}` : e.message);
    } finally {
      setBusy(false);
    }
  };

  return (
    <Modal
      opened={opened}
      onClose={onClose}
      title="Submit a job"
      size="lg"
      closeButtonProps={{ 'aria-label': 'Close' }}
    >
      <Stack>
        <Textarea
          label="Job spec (JSON)"
          description="Everything but name and workflow.task has defaults; examples/ has one per task. Ctrl+Enter submits."
          name="spec"
          autosize
          minRows={8}
          maxRows={24}
          value={text}
          onChange={(e) => setText(e.currentTarget.value)}
          onKeyDown={(e) => {
            if (e.key === 'Enter' && (e.ctrlKey || e.metaKey) && !busy) void submit();
          }}
          styles={{ input: { fontFamily: 'monospace' } }}
        />
        {error && (
          <Alert color="red" data-testid="submit-error">
            {error}
          </Alert>
        )}
        <Group justify="flex-end">
          <Button variant="default" onClick={onClose}>
            Cancel
          </Button>
          <Button onClick={submit} loading={busy} data-testid="submit-job">
            Submit
          </Button>
        </Group>
      </Stack>
    </Modal>
  );
}
