/**
 * Creating a tenant (POST /v1/tenants): its name and fair-share weight; the answer's first API key
 * is shown once in the dialog, which then starts clean. A refusal names its field under it.
 */
import { useState, type FormEvent } from 'react';
import { Button, Group, Modal, NumberInput, Stack, TextInput } from '@mantine/core';
import { unwrap } from '../../../sdk/src/index.js';
import { useApi } from '../api-context.js';
import { fieldError } from '../refusal.js';
import { useAction } from '../use-action.js';
import { Refusal } from './refusal.js';
import { ShownOnce } from './shown-once.js';

const FIELDS = ['name', 'weight'] as const;

export function CreateTenant({
  opened,
  onClose,
  onCreated,
}: {
  opened: boolean;
  onClose: () => void;
  onCreated: () => void;
}) {
  const { client } = useApi();
  const [name, setName] = useState('');
  const [weight, setWeight] = useState<string | number>(1);
  const [created, setCreated] = useState<{ name: string; apiKey: string } | null>(null);
  const create = useAction();

  // Closed, it forgets everything: the key above all, and a half-typed form.
  const close = () => {
    setName('');
    setWeight(1);
    setCreated(null);
    create.clear();
    onClose();
  };
  const submit = async (e: FormEvent) => {
    e.preventDefault();
    await create.run(async () => {
      const t = await unwrap(
        client.POST('/v1/tenants', {
          body: { name: name.trim(), ...(weight === '' ? {} : { weight: Number(weight) }) },
        }),
      );
      setCreated({ name: t.name, apiKey: t.apiKey });
      onCreated();
    });
  };

  return (
    <Modal
      opened={opened}
      onClose={close}
      title={created ? `Tenant ${created.name} created` : 'New tenant'}
      closeOnClickOutside={!created}
      closeButtonProps={{ 'aria-label': 'Close' }}
    >
      {created ? (
        <ShownOnce label={`API key of ${created.name}`} value={created.apiKey} onDone={close} />
      ) : (
        <form onSubmit={submit}>
          <Stack>
            <TextInput
              label="Tenant name"
              description='Lowercase letters, digits and "-"'
              value={name}
              onChange={(e) => setName(e.currentTarget.value)}
              error={fieldError(create.error, 'name')}
              required
              data-autofocus
            />
            <NumberInput
              label="Weight"
              description="Its fair share against the other tenants': 0.01 to 1000 (default 1)"
              value={weight}
              onChange={setWeight}
              error={fieldError(create.error, 'weight')}
              decimalScale={3}
            />
            <Refusal error={create.error} notDone="Not created" fields={FIELDS} />
            <Group justify="flex-end">
              <Button variant="default" onClick={close}>
                Cancel
              </Button>
              <Button type="submit" loading={create.busy}>
                Create tenant
              </Button>
            </Group>
          </Stack>
        </form>
      )}
    </Modal>
  );
}
