import { useState, type FormEvent } from 'react';
import { Alert, Button, Center, Paper, PasswordInput, Stack, Text, Title } from '@mantine/core';
import { login, type Session } from '../session.js';

export function LoginView({ onLogin }: { onLogin: (s: Session) => void }) {
  const [key, setKey] = useState('');
  const [error, setError] = useState<string>();
  const [busy, setBusy] = useState(false);

  const submit = async (e: FormEvent) => {
    e.preventDefault();
    setBusy(true);
    setError(undefined);
    try {
      onLogin(await login(key.trim()));
    } catch (err) {
      setError((err as Error).message);
    } finally {
      setBusy(false);
    }
  };

  return (
    <Center mih="100vh" p="md">
      <Paper withBorder shadow="sm" p="lg" w="100%" maw={420}>
        <form onSubmit={submit}>
          <Stack>
            <Title order={2}>Timeshare</Title>
            <Text size="sm" c="dimmed">
              Log in with a tenant API key (exchanged for a short-lived token) or the admin key. The key is
              kept in this tab only.
            </Text>
            <PasswordInput
              label="API key"
              name="apiKey"
              autoComplete="off"
              value={key}
              onChange={(e) => setKey(e.currentTarget.value)}
              required
            />
            {error && (
              <Alert color="red" data-testid="login-error">
                {error}
              </Alert>
            )}
            <Button type="submit" loading={busy}>
              Log in
            </Button>
          </Stack>
        </form>
      </Paper>
    </Center>
  );
}
