/**
 * A tenant's quota, edited (PUT /v1/tenants/{id}/quota: only the fields changed are sent, the
 * others keep their value). A value the API refuses is said under its field, and the form keeps
 * what was typed; a saved one shows what the API stored. A field left empty, or holding what is not
 * a number (the input drops letters as they are typed: "abc" leaves it empty), a fraction in a
 * whole-number field ("2.5": the input keeps the point, never making it 25) or a number out of the
 * field's bounds is said under the field before anything is sent.
 */
import { useState, type FormEvent } from 'react';
import { Button, Group, NumberInput, SimpleGrid, Stack, Text } from '@mantine/core';
import { unwrap, type Quota } from '../../../sdk/src/index.js';
import { useApi } from '../api-context.js';
import { fieldError } from '../refusal.js';
import { useAction } from '../use-action.js';
import { Refusal } from './refusal.js';

/** The fields, with the bounds the API takes (quotaUpdateSchema, api/http/schemas.ts). */
const FIELDS: { key: keyof Quota; label: string; integer: boolean; max: number }[] = [
  { key: 'maxActiveJobs', label: 'Max active jobs', integer: true, max: 1_000_000 },
  { key: 'maxConcurrentDevices', label: 'Max devices at once', integer: true, max: 1_000_000 },
  { key: 'maxDevicesPerJob', label: 'Max devices per job', integer: true, max: 1_000_000 },
  { key: 'deviceHoursPerMonth', label: 'Device-hours a month', integer: false, max: 1e9 },
];
const KEYS = FIELDS.map((f) => f.key);

type Values = Record<keyof Quota, string | number>;
type FieldErrors = Partial<Record<keyof Quota, string>>;

/**
 * What a field holds that is no number of its kind or is out of its bounds, said as what it takes;
 * undefined when fine.
 */
function notANumber(f: (typeof FIELDS)[number], v: string | number): string | undefined {
  const n = typeof v === 'number' ? v : v.trim() === '' ? NaN : Number(v);
  if (Number.isFinite(n) && (!f.integer || Number.isInteger(n)) && n >= 0 && n <= f.max) return undefined;
  return `Enter a ${f.integer ? 'whole number' : 'number'} from 0 to ${f.max.toLocaleString('en-US')}`;
}

export function QuotaForm({ tenantId, quota }: { tenantId: string; quota: Quota }) {
  const { client } = useApi();
  const [saved, setSaved] = useState<Quota>(quota);
  const [values, setValues] = useState<Values>(quota);
  const [done, setDone] = useState(false);
  const [invalid, setInvalid] = useState<FieldErrors>({});
  const save = useAction();

  const changed = KEYS.filter((k) => values[k] !== saved[k]);
  const submit = async (e: FormEvent) => {
    e.preventDefault();
    setDone(false);
    // An emptied field is not "unchanged": it is refused here, with the others that hold no number.
    const refused: FieldErrors = {};
    for (const f of FIELDS) if (changed.includes(f.key)) refused[f.key] = notANumber(f, values[f.key]);
    setInvalid(refused);
    if (Object.values(refused).some(Boolean)) {
      save.clear();
      return;
    }
    const body: Partial<Quota> = {};
    for (const k of changed) body[k] = Number(values[k]);
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
                setInvalid((old) => ({ ...old, [f.key]: undefined }));
                setValues((old) => ({ ...old, [f.key]: v }));
              }}
              // Every field takes what is typed as typed: a whole-number field that dropped the point
              // turned "2.5" into 25 and sent it. What is not its kind is refused by notANumber.
              allowDecimal
              error={invalid[f.key] ?? fieldError(save.error, f.key)}
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
                setInvalid({});
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
