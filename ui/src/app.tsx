/**
 * The shell: the login screen until a key is accepted, then a header and a navigation bar (a
 * drawer behind a burger on a phone) with the views of the session's role. Routes live under /ui.
 */
import { useMemo, useState } from 'react';
import { AppShell, Burger, Button, Group, NavLink, Text, Title } from '@mantine/core';
import { useDisclosure } from '@mantine/hooks';
import { Link, Redirect, Route, Router, Switch, useLocation } from 'wouter';
import { ApiContext } from './api-context.js';
import { clientFor, loadSession, logout, type Session } from './session.js';
import { LoginView } from './views/login.js';
import { JobsView } from './views/jobs.js';
import { JobPage } from './views/job-page.js';
import { UsageView } from './views/usage.js';
import { PoolsView } from './views/pools.js';
import { PoolPage } from './views/pool-page.js';
import { TenantsView } from './views/tenants.js';
import { TenantPage } from './views/tenant-page.js';
import { NodesView } from './views/nodes.js';
import { WebhooksView } from './views/webhooks.js';
import { WebhookPage } from './views/webhook-page.js';
import { AdminJobNotice } from './views/admin-job.js';

const NAV = {
  tenant: [
    { href: '/jobs', label: 'Jobs' },
    { href: '/usage', label: 'Quota and usage' },
    { href: '/webhooks', label: 'Webhooks' },
  ],
  admin: [
    { href: '/pools', label: 'Pools and queues' },
    { href: '/tenants', label: 'Tenants' },
    { href: '/nodes', label: 'Nodes' },
  ],
};

function Shell({ session, onLogout }: { session: Session; onLogout: () => void }) {
  const [opened, { toggle, close }] = useDisclosure();
  const [location] = useLocation();
  const api = useMemo(() => ({ session, client: clientFor(session) }), [session]);
  const nav = NAV[session.role];
  return (
    <ApiContext.Provider value={api}>
      <AppShell
        header={{ height: 56 }}
        navbar={{ width: 220, breakpoint: 'sm', collapsed: { mobile: !opened } }}
        padding="md"
      >
        <AppShell.Header>
          <Group h="100%" px="md" justify="space-between">
            <Group>
              <Burger opened={opened} onClick={toggle} hiddenFrom="sm" size="sm" aria-label="navigation" />
              <Title order={4}>Timeshare</Title>
            </Group>
            <Group gap="xs">
              <Text size="sm" c="dimmed" visibleFrom="xs" data-testid="who">
                {session.tenantName ?? session.role}
              </Text>
              <Button size="xs" variant="default" onClick={onLogout} data-testid="logout">
                Log out
              </Button>
            </Group>
          </Group>
        </AppShell.Header>
        <AppShell.Navbar p="xs">
          {nav.map((n) => (
            <NavLink
              key={n.href}
              component={Link}
              href={n.href}
              label={n.label}
              active={location.startsWith(n.href)}
              onClick={close}
            />
          ))}
        </AppShell.Navbar>
        <AppShell.Main>{session.role === 'tenant' ? <TenantRoutes /> : <AdminRoutes />}</AppShell.Main>
      </AppShell>
    </ApiContext.Provider>
  );
}

export function App() {
  const [session, setSession] = useState(loadSession);
  return (
    <Router base="/ui">
      {session ? (
        <Shell
          session={session}
          onLogout={() => {
            logout();
            setSession(null);
          }}
        />
      ) : (
        <LoginView onLogin={setSession} />
      )}
    </Router>
  );
}

// Each role's routes are a Switch's direct children: wouter's Switch does not look inside a
// fragment, so routes in one all rendered, and the fallback's Redirect sent every page loaded by
// its address (a reload, a shared link) back to the first list.
function TenantRoutes() {
  return (
    <Switch>
      <Route path="/jobs">{() => <JobsView />}</Route>
      <Route path="/jobs/:id">{(p) => <JobPage id={p.id} />}</Route>
      <Route path="/usage">{() => <UsageView />}</Route>
      <Route path="/webhooks">{() => <WebhooksView />}</Route>
      <Route path="/webhooks/:id">{(p) => <WebhookPage id={p.id} />}</Route>
      <Route>{() => <Redirect to="/jobs" />}</Route>
    </Switch>
  );
}

function AdminRoutes() {
  return (
    <Switch>
      <Route path="/pools">{() => <PoolsView />}</Route>
      <Route path="/pools/:name">{(p) => <PoolPage name={decodeURIComponent(p.name)} />}</Route>
      <Route path="/tenants">{() => <TenantsView />}</Route>
      <Route path="/tenants/:id">{(p) => <TenantPage id={p.id} />}</Route>
      <Route path="/nodes">{() => <NodesView />}</Route>
      <Route path="/jobs/:id">{(p) => <AdminJobNotice id={p.id} />}</Route>
      <Route>{() => <Redirect to="/pools" />}</Route>
    </Switch>
  );
}
