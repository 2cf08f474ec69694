/**
 * A tenant's fair-share weight, edited (PATCH /v1/tenants/{id}); the scheduler's next round uses
 * it. A value the API refuses is said under the field, and the form keeps what was typed.
 */
import { useState, type FormEvent } from 'react';
import { Button, Group, NumberInput, Text } from '@mantine/core';
import { unwrap } from '../../../sdk/src/index.js';
import { useApi } from '../api-context.js';
import { fieldError } from '../refusal.js';
import { useAction } from '../use-action.js';
import { Refusal } from './refusal.js';

export function WeightForm({ tenantId, weight }: { tenantId: string; weight: number }) {
  const { client } = useApi();
  const [saved, setSaved] = useState(weight);
  const [value, setValue] = useState<string | number>(weight);
  const [done, setDone] = useState(false);
  const save = useAction();

  const submit = async (e: FormEvent) => {
    e.preventDefault();
    setDone(false);
    // An emptied field is sent as it is, for the API to refuse it by name.
    const body = { weight: value === '' ? (null as unknown as number) : Number(value) };
    const ok = await save.run(async () => {
      const t = await unwrap(client.PATCH('/v1/tenants/{id}', { params: { path: { id: tenantId } }, body }));
      setSaved(t.weight);
      setValue(t.weight);
    });
    setDone(ok);
  };

  return (
    <form onSubmit={submit} data-testid="weight-form">
      <Group align="flex-end">
        <NumberInput
          label="Fair-share weight"
          description="Its part of a pool, in proportion to the other tenants' weights: 0.01 to 1000"
          value={value}
          onChange={(v) => {
            setDone(false);
            setValue(v);
          }}
          error={fieldError(save.error, 'weight')}
          w={260}
        />
        <Button type="submit" loading={save.busy} disabled={value === saved}>
          Save weight
        </Button>
        {done && (
          <Text size="sm" c="green" data-testid="weight-saved">
            Saved
          </Text>
        )}
      </Group>
      <Refusal error={save.error} notDone="Not saved" fields={['weight']} />
    </form>
  );
}
