/**
 * A tenant's quota, edited (PUT /v1/tenants/{id}/quota: only the fields changed are sent, the
 * others keep their value). A value the API refuses is said under its field, and the form keeps
 * what was typed; a saved one shows what the API stored.
 */
import { useState, type FormEvent } from 'react';
import { Button, Group, NumberInput, SimpleGrid, Stack, Text } from '@mantine/core';
import { unwrap, type Quota } from '../../../sdk/src/index.js';
import { useApi } from '../api-context.js';
import { fieldError } from '../refusal.js';
import { useAction } from '../use-action.js';
import { Refusal } from './refusal.js';

const FIELDS: { key: keyof Quota; label: string; integer: boolean }[] = [
  { key: 'maxActiveJobs', label: 'Max active jobs', integer: true },
  { key: 'maxConcurrentDevices', label: 'Max devices at once', integer: true },
  { key: 'maxDevicesPerJob', label: 'Max devices per job', integer: true },
  { key: 'deviceHoursPerMonth', label: 'Device-hours a month', integer: false },
];
const KEYS = FIELDS.map((f) => f.key);

type Values = Record<keyof Quota, string | number>;

export function QuotaForm({ tenantId, quota }: { tenantId: string; quota: Quota }) {
  const { client } = useApi();
  const [saved, setSaved] = useState<Quota>(quota);
  const [values, setValues] = useState<Values>(quota);
  const [done, setDone] = useState(false);
  const save = useAction();

  const changed = KEYS.filter((k) => values[k] !== saved[k]);
  const submit = async (e: FormEvent) => {
    e.preventDefault();
    setDone(false);
    const body: Partial<Quota> = {};
    // An emptied field is sent as it is, for the API to refuse it by name (it is not "unchanged").
    for (const k of changed) body[k] = values[k] === '' ? (null as unknown as number) : Number(values[k]);
    const ok = await save.run(async () => {
      const q = await unwrap(
        client.PUT('/v1/tenants/{id}/quota', { params: { path: { id: tenantId } }, body }),
      );
      setSaved(q);
      setValues(q);
    });
    setDone(ok);
  };

  return (
    <form onSubmit={submit} data-testid="quota-form">
      <Stack>
        <SimpleGrid cols={{ base: 1, sm: 2 }}>
          {FIELDS.map((f) => (
            <NumberInput
              key={f.key}
              label={f.label}
              value={values[f.key]}
              onChange={(v) => {
                setDone(false);
                setValues((old) => ({ ...old, [f.key]: v }));
              }}
              allowDecimal={!f.integer}
              error={fieldError(save.error, f.key)}
            />
          ))}
        </SimpleGrid>
        <Refusal error={save.error} notDone="Not saved" fields={KEYS} />
        <Group>
          <Button type="submit" loading={save.busy} disabled={changed.length === 0}>
            Save quota
          </Button>
          {changed.length > 0 && (
            <Button
              variant="default"
              onClick={() => {
                setValues(saved);
                save.clear();
              }}
            >
              Undo changes
            </Button>
          )}
          {done && (
            <Text size="sm" c="green" data-testid="quota-saved">
              Saved
            </Text>
          )}
        </Group>
      </Stack>
    </form>
  );
}
