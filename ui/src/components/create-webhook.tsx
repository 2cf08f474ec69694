/**
 * Registering a webhook endpoint (POST /v1/webhooks): its URL, the event types to deliver (none
 * ticked: every type) and a description; the answer's signing secret is shown once in the dialog,
 * which then starts clean. A refusal (a private address, say) is said under its field.
 */
import { useState, type FormEvent } from 'react';
import { Button, Checkbox, Group, Modal, SimpleGrid, Stack, TextInput } from '@mantine/core';
import { TimeshareError, unwrap, type components } from '../../../sdk/src/index.js';
import { useApi } from '../api-context.js';
import { fieldError, refusalText } from '../refusal.js';
import { useAction } from '../use-action.js';
import { Refusal } from './refusal.js';
import { ShownOnce } from './shown-once.js';

type EventType = NonNullable<components['schemas']['CreateWebhookEndpoint']['events']>[number];

/** The subscribable types (docs/api.md, Webhooks), in the order a job meets them. */
export const WEBHOOK_EVENTS: readonly EventType[] = [
  'job.queued',
  'job.admitted',
  'job.placed',
  'job.running',
  'job.preempted',
  'job.checkpoint',
  'job.paused',
  'job.resumed',
  'job.succeeded',
  'job.failed',
  'job.cancelled',
];

export function CreateWebhook({
  opened,
  onClose,
  onCreated,
}: {
  opened: boolean;
  onClose: () => void;
  onCreated: () => void;
}) {
  const { client } = useApi();
  const [url, setUrl] = useState('');
  const [events, setEvents] = useState<string[]>([]);
  const [description, setDescription] = useState('');
  const [secret, setSecret] = useState<string | null>(null);
  const create = useAction();

  const close = () => {
    setUrl('');
    setEvents([]);
    setDescription('');
    setSecret(null);
    create.clear();
    onClose();
  };
  const submit = async (e: FormEvent) => {
    e.preventDefault();
    await create.run(async () => {
      const ep = await unwrap(
        client.POST('/v1/webhooks', {
          body: {
            url: url.trim(),
            events: events as EventType[],
            ...(description.trim() ? { description: description.trim() } : {}),
          },
        }),
      );
      setSecret(ep.secret);
      onCreated();
    });
  };
  // A repeat in the list is refused as "events.1": said under the list, with its index.
  const eventsError =
    create.error instanceof TimeshareError && /^events(\.\d+)?$/.test(create.error.param ?? '')
      ? refusalText(create.error)
      : undefined;

  return (
    <Modal
      opened={opened}
      onClose={close}
      title={secret ? 'Webhook created' : 'New webhook'}
      size="lg"
      closeOnClickOutside={!secret}
      closeButtonProps={{ 'aria-label': 'Close' }}
    >
      {secret ? (
        <ShownOnce label="signing secret" value={secret} onDone={close} />
      ) : (
        <form onSubmit={submit}>
          <Stack>
            <TextInput
              label="URL"
              description="http(s); it receives a signed POST per event"
              placeholder="https://example.com/timeshare-hook"
              value={url}
              onChange={(e) => setUrl(e.currentTarget.value)}
              error={fieldError(create.error, 'url')}
              required
              data-autofocus
            />
            <Checkbox.Group
              label="Event types"
              description="None ticked: every type"
              value={events}
              onChange={setEvents}
              error={eventsError}
            >
              <SimpleGrid cols={{ base: 1, xs: 2, sm: 3 }} mt="xs">
                {WEBHOOK_EVENTS.map((t) => (
                  <Checkbox key={t} value={t} label={t} />
                ))}
              </SimpleGrid>
            </Checkbox.Group>
            <TextInput
              label="Description (optional)"
              value={description}
              onChange={(e) => setDescription(e.currentTarget.value)}
              error={fieldError(create.error, 'description')}
              maxLength={256}
            />
            {!eventsError && (
              <Refusal error={create.error} notDone="Not created" fields={['url', 'description']} />
            )}
            <Group justify="flex-end">
              <Button variant="default" onClick={close}>
                Cancel
              </Button>
              <Button type="submit" loading={create.busy}>
                Create webhook
              </Button>
            </Group>
          </Stack>
        </form>
      )}
    </Modal>
  );
}
