/**
 * What the API answered to a refused action, after what was not done ("Not revoked: …"); nothing
 * when the refusal names one of `fields` (the form says it under that field).
 */
import { Alert } from '@mantine/core';
import { namesField, refusalText } from '../refusal.js';

export function Refusal({
  error,
  notDone,
  fields = [],
  testId = 'action-error',
}: {
  error: Error | null;
  notDone: string;
  fields?: readonly string[];
  testId?: string;
}) {
  if (!error || namesField(error, fields)) return null;
  return (
    <Alert color="red" data-testid={testId} role="alert">
      {notDone}: {refusalText(error)}
    </Alert>
  );
}
