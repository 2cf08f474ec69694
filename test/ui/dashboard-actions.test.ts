/**
 * The dashboard's mutating actions in a real browser against a real API (no scheduler or worker:
 * none of these needs one), each checked through the API: the admin creates a tenant (its first key
 * shown once, copied, and good for a token), edits its quota (a value out of range refused under its
 * field), creates a key and revokes one once confirmed (it then gets no token), creates and revokes
 * a node key, cordons and drains a node (each asked in a dialog; the flag, since when and the reason
 * shown, on the nodes page and the pool's) and uncordons it, and releases a node once the dialog
 * says what that does (the node is then lost); a tenant registers a webhook (a private address
 * refused under the URL; the signing secret shown once), sees its deliveries and replays one,
 * deletes it once confirmed, and changes a queued job's priority from its page. Refusals provoked on
 * the way are the only failed requests; the pages fit a phone's width.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import type { Browser, Page } from 'playwright-core';
import { startHarness, type Harness } from '../helpers/api-harness.js';
import { waitFor } from '../helpers/cluster.js';
import { registerTestNode } from '../helpers/test-node.js';
import { buildDashboard, launchBrowser, openPage } from '../helpers/browser.js';

let h: Harness;
let browser: Browser;

before(async () => {
  buildDashboard();
  h = await startHarness();
  browser = await launchBrowser();
});
after(async () => {
  await browser?.close();
  await h?.close();
});

async function logIn(page: Page, key: string, landmark: string) {
  await page.goto(`${h.api.url}/ui/`);
  await page.getByLabel('API key').fill(key);
  await page.getByRole('button', { name: 'Log in' }).click();
  await page.getByTestId(landmark).waitFor();
}

/** Whether an API key can still be exchanged for a token (the API's status for it). */
const exchange = async (apiKey: string) => (await h.http.post('/v1/auth/token').send({ apiKey })).status;

/** The secret on show, once: it has its warning and its copy button copies it. */
async function takeShownOnce(page: Page, label: string): Promise<string> {
  const shown = page.getByTestId('shown-once');
  await shown.waitFor();
  assert.match(await shown.innerText(), /only time it is shown: it cannot be shown again/);
  const value = (await shown.getByTestId('shown-once-value').innerText()).trim();
  await shown.getByRole('button', { name: `Copy the ${label}` }).click();
  await shown.getByRole('button', { name: `Copied the ${label}` }).waitFor();
  assert.equal(await page.evaluate('navigator.clipboard.readText()'), value, 'the copy button copied it');
  return value;
}

const phoneOverflow = async (page: Page) => {
  await page.setViewportSize({ width: 390, height: 844 });
  await page.waitForTimeout(300);
  const overflow = Number(await page.evaluate('document.documentElement.scrollWidth - window.innerWidth'));
  await page.setViewportSize({ width: 1280, height: 860 });
  return overflow;
};

test(
  'admin: a tenant, its quota and keys; node keys; a node cordoned, drained, uncordoned and released',
  { timeout: 90_000 },
  async () => {
    const { page, errors, screenshot } = await openPage(browser);
    await page.context().grantPermissions(['clipboard-read', 'clipboard-write'], { origin: h.api.url });
    await logIn(page, h.adminKey, 'pools-table');
    await page.getByRole('link', { name: 'Tenants' }).click();

    // A new tenant: a name the API refuses is said under the field; the first key is shown once.
    await page.getByRole('button', { name: 'New tenant' }).click();
    const create = page.getByRole('dialog', { name: 'New tenant' });
    await create.getByLabel('Tenant name').fill('Not Valid');
    await create.getByRole('button', { name: 'Create tenant' }).click();
    await create.getByText('lowercase letters, digits and "-"', { exact: true }).last().waitFor();
    assert.equal(await create.getByLabel('Tenant name').getAttribute('aria-invalid'), 'true');
    await create.getByLabel('Tenant name').fill('ui-made');
    await create.getByLabel('Weight').fill('2');
    await create.getByRole('button', { name: 'Create tenant' }).click();
    const firstKey = await takeShownOnce(page, 'API key of ui-made');
    assert.match(firstKey, /^tsk_/);
    const made = (await h.admin(h.http.get('/v1/tenants')).expect(200)).body.data.find(
      (t: { name: string }) => t.name === 'ui-made',
    );
    assert.equal(made?.weight, 2, 'created with its weight');
    const token = await h.http.post('/v1/auth/token').send({ apiKey: firstKey }).expect(200);
    assert.equal(token.body.tenant?.name, 'ui-made', 'the key shown is the tenant’s');
    await page.getByRole('button', { name: 'I have kept it' }).click();
    await page.getByRole('dialog').waitFor({ state: 'detached' });
    // Opened again, nothing of the last one is left: no key, no name.
    await page.getByRole('button', { name: 'New tenant' }).click();
    assert.equal(await create.getByLabel('Tenant name').inputValue(), '');
    assert.equal(await page.getByTestId('shown-once').count(), 0);
    await page.keyboard.press('Escape');
    assert.equal(await page.getByText(firstKey).count(), 0, 'the key is shown once only');

    // Its quota: a value out of range is refused under its field (by the form, before any request)
    // and changes nothing; then saved.
    await page.getByTestId('tenants-table').getByRole('link', { name: 'ui-made' }).click();
    const form = page.getByTestId('quota-form');
    await form.getByLabel('Max active jobs').fill('2000000');
    await form.getByRole('button', { name: 'Save quota' }).click();
    await waitFor(
      'the refusal under its field',
      async () => (await form.getByLabel('Max active jobs').getAttribute('aria-invalid')) === 'true',
      15_000,
    );
    assert.match(await form.innerText(), /Enter a whole number from 0 to 1,000,000/);
    const before = (await h.admin(h.http.get(`/v1/tenants/${made.id}/quota`)).expect(200)).body;
    assert.notEqual(before.maxActiveJobs, 2_000_000);
    await form.getByLabel('Max active jobs').fill('7');
    await form.getByLabel('Device-hours a month').fill('12.5');
    await form.getByRole('button', { name: 'Save quota' }).click();
    await form.getByTestId('quota-saved').waitFor();
    assert.deepEqual((await h.admin(h.http.get(`/v1/tenants/${made.id}/quota`)).expect(200)).body, {
      ...before,
      maxActiveJobs: 7,
      deviceHoursPerMonth: 12.5,
    });
    // Its weight: refused at 0 under its field, then changed.
    const weight = page.getByTestId('weight-form');
    await weight.getByLabel('Fair-share weight').fill('0');
    await weight.getByRole('button', { name: 'Save weight' }).click();
    await waitFor(
      'the weight refused under its field',
      async () => (await weight.getByLabel('Fair-share weight').getAttribute('aria-invalid')) === 'true',
      15_000,
    );
    await weight.getByLabel('Fair-share weight').fill('2.5');
    await weight.getByRole('button', { name: 'Save weight' }).click();
    await weight.getByTestId('weight-saved').waitFor();
    assert.equal((await h.admin(h.http.get(`/v1/tenants/${made.id}`)).expect(200)).body.weight, 2.5);

    // Its keys: the first one listed by prefix; another created (shown once, good for a token).
    const keys = page.getByTestId('tenant-keys');
    const firstPrefix = firstKey.slice(0, 12);
    await keys.locator(`tr[data-key-prefix="${firstPrefix}"]`).waitFor();
    await keys.getByLabel("New API key's name (optional)").fill('ci');
    await keys.getByRole('button', { name: 'Create API key' }).click();
    const secondKey = await takeShownOnce(page, 'new API key');
    assert.equal(await exchange(secondKey), 200);
    await keys.getByRole('button', { name: 'I have kept it' }).click();
    await keys.getByRole('cell', { name: 'ci', exact: true }).waitFor();
    // Revoking asks first: Escape and "Keep the key" keep it.
    const revokeFirst = keys.getByRole('button', { name: `Revoke API key ${firstPrefix}` });
    const confirmRevoke = page.getByRole('dialog', { name: `Revoke API key ${firstPrefix}…?` });
    await revokeFirst.click();
    await confirmRevoke.getByText('can no longer be exchanged for a token').waitFor();
    await page.keyboard.press('Escape');
    await confirmRevoke.waitFor({ state: 'detached' });
    await revokeFirst.click();
    await confirmRevoke.getByRole('button', { name: 'Keep the key' }).click();
    await confirmRevoke.waitFor({ state: 'detached' });
    assert.equal(await exchange(firstKey), 200, 'kept');
    await revokeFirst.click();
    await confirmRevoke.getByRole('button', { name: 'Revoke the key' }).click();
    await keys.locator(`tr[data-key-prefix="${firstPrefix}"][data-revoked=true]`).waitFor();
    assert.equal(await exchange(firstKey), 401, 'the revoked key gets no token');
    assert.equal(await exchange(secondKey), 200, 'the other key still does');
    await screenshot('tenant-page');
    assert.ok((await phoneOverflow(page)) <= 0, "the tenant page fits a phone's width");

    // Node keys: one created (shown once, a node's), revoked once confirmed.
    const node = await registerTestNode(h, 'ui-node');
    await page.getByRole('link', { name: 'Nodes' }).click();
    const nodeKeys = page.getByTestId('node-keys');
    await nodeKeys.getByRole('cell', { name: 'ui-node', exact: true }).waitFor();
    await nodeKeys.getByLabel("New node key's name (optional)").fill('spare');
    await nodeKeys.getByRole('button', { name: 'Create node key' }).click();
    const nodeKey = await takeShownOnce(page, 'new node key');
    assert.equal(
      (await h.http.post('/v1/auth/token').send({ apiKey: nodeKey }).expect(200)).body.role,
      'node',
    );
    await nodeKeys.getByRole('button', { name: 'I have kept it' }).click();
    await nodeKeys.getByRole('button', { name: `Revoke node key ${nodeKey.slice(0, 12)}` }).click();
    await page
      .getByRole('dialog', { name: `Revoke node key ${nodeKey.slice(0, 12)}…?` })
      .getByRole('button', { name: 'Revoke the key' })
      .click();
    await nodeKeys.locator(`tr[data-key-prefix="${nodeKey.slice(0, 12)}"][data-revoked=true]`).waitFor();
    assert.equal(await exchange(nodeKey), 401, 'the revoked node key gets no token');
    assert.equal(await exchange(node.apiKey), 200, "the node's own key is untouched");

    // Cordoning and draining a node say what they do and wait for the red button; the flag and the
    // reason show on the node's row; uncordon lifts it.
    const cordonOf = async () =>
      (await h.admin(h.http.get('/v1/nodes')).expect(200)).body.data.find(
        (n: { id: string }) => n.id === node.id,
      )?.cordon;
    const row = page.locator(`tr[data-node-id="${node.id}"]`);
    const cordon = page.getByRole('dialog', { name: 'Cordon ui-node?' });
    await page.getByRole('button', { name: 'Cordon ui-node' }).click();
    assert.match(await cordon.innerText(), /the jobs running there keep running/);
    await cordon.getByRole('button', { name: 'Keep it in service' }).click();
    await cordon.waitFor({ state: 'detached' });
    assert.equal(await cordonOf(), null);
    const drain = page.getByRole('dialog', { name: 'Drain ui-node?' });
    await page.getByRole('button', { name: 'Drain ui-node' }).click();
    assert.match(await drain.innerText(), /resumes from its checkpoint on another node/);
    await drain.getByLabel('Reason (optional)').fill('bad fan');
    await drain.getByRole('button', { name: 'Drain the node' }).click();
    await row.getByTestId('cordon-reason').filter({ hasText: 'bad fan' }).waitFor();
    assert.equal(await row.getByTestId('cordon-state').textContent(), 'cordoned, draining');
    assert.deepEqual(
      { ...(await cordonOf()), cordonedAt: 'set' },
      { cordonedAt: 'set', reason: 'bad fan', evict: true },
    );
    assert.match(await row.getByTestId('cordon-since').innerText(), /^since \d+s ago$/);
    // The pool's page says which of its nodes are cordoned, since when and why, and so does the
    // node's device lane; its link leads back to where the cordon is lifted.
    await page.getByRole('link', { name: 'Pools and queues' }).click();
    await page.getByTestId('pools-table').getByRole('link', { name: 'default' }).click();
    const onPool = page.getByTestId('cordoned-node').filter({ hasText: 'ui-node' });
    await onPool.waitFor();
    assert.match(await onPool.innerText(), /cordoned, draining\s*since .+ \(\d+s ago\)\s*— bad fan/i);
    assert.match(await page.getByTestId('lane-cordon').first().innerText(), /^cordoned, draining since /);
    await page.getByRole('link', { name: 'Uncordon on the nodes page' }).click();
    await page.getByRole('button', { name: 'Uncordon ui-node' }).click();
    await row.getByRole('button', { name: 'Cordon ui-node' }).waitFor();
    assert.equal(await cordonOf(), null);

    // Releasing a node says what it does (and how a drain differs) and waits for the red button.
    const nodeStatus = async () =>
      (await h.admin(h.http.get('/v1/nodes')).expect(200)).body.data.find(
        (n: { id: string }) => n.id === node.id,
      )?.status;
    const release = page.getByRole('dialog', { name: 'Release ui-node?' });
    await page.getByRole('button', { name: 'Release ui-node' }).click();
    const said = await release.innerText();
    assert.match(said, /can no longer act for it/);
    assert.match(said, /back to the queue once the node has been silent for the node timeout/);
    assert.match(said, /drains the node \(its jobs checkpoint and move/);
    await release.getByRole('button', { name: 'Keep it bound' }).click();
    await release.waitFor({ state: 'detached' });
    assert.equal(await nodeStatus(), 'ready');
    await page.getByRole('button', { name: 'Release ui-node' }).click();
    await release.getByRole('button', { name: 'Release the node' }).click();
    await page
      .locator(`tr[data-node-id="${node.id}"]`)
      .getByTestId('node-status')
      .filter({ hasText: 'lost' })
      .waitFor();
    assert.equal(await nodeStatus(), 'lost');
    // Unbound: its key can no longer act for it.
    await node.as(h.http.post(`/v1/nodes/${node.id}/drain`)).expect(404);
    await screenshot('nodes');
    assert.ok((await phoneOverflow(page)) <= 0, "the nodes page fits a phone's width");

    assert.deepEqual(
      errors.filter((e) => !e.startsWith('console: Failed to load resource')),
      // The quota out of range never reached the API: the form refused it.
      ['400 POST /v1/tenants', `400 PATCH /v1/tenants/${made.id}`],
    );
  },
);

test(
  'tenant: a webhook created, its deliveries replayed, deleted; a job’s priority changed',
  { timeout: 90_000 },
  async () => {
    const tenant = await h.createTenant('ui-hooks');
    const { page, errors, screenshot } = await openPage(browser);
    await page.context().grantPermissions(['clipboard-read', 'clipboard-write'], { origin: h.api.url });
    await logIn(page, tenant.apiKey, 'jobs-table');
    await page.getByRole('link', { name: 'Webhooks' }).click();
    const listed = async () => (await tenant.as(h.http.get('/v1/webhooks')).expect(200)).body.data;

    // A private address is refused under the URL (the API's reason), and nothing is registered.
    await page.getByRole('button', { name: 'New webhook' }).click();
    const create = page.getByRole('dialog', { name: 'New webhook' });
    await create.getByLabel('URL').fill('http://127.0.0.1/hook');
    await create.getByRole('button', { name: 'Create webhook' }).click();
    await waitFor(
      'the refusal under the URL',
      async () => (await create.getByLabel('URL').getAttribute('aria-invalid')) === 'true',

      15_000,
    );
    assert.match(await create.innerText(), /resolves to 127\.0\.0\.1, a private or loopback address/);
    assert.deepEqual(await listed(), []);
    const url = 'https://93.184.216.34/hook';
    await create.getByLabel('URL').fill(url);
    await create.getByLabel('job.failed').check();
    await create.getByLabel('job.succeeded').check();
    await create.getByLabel('Description (optional)').fill('ops');
    await create.getByRole('button', { name: 'Create webhook' }).click();
    const secret = await takeShownOnce(page, 'signing secret');
    assert.match(secret, /^whsec_/);
    const [hook, ...others] = await listed();
    assert.deepEqual(others, []);
    assert.deepEqual(
      { url: hook.url, events: hook.events, description: hook.description, secret: hook.secret },
      { url, events: ['job.failed', 'job.succeeded'], description: 'ops', secret: undefined },
    );
    await page.getByRole('button', { name: 'I have kept it' }).click();
    await page.getByRole('dialog').waitFor({ state: 'detached' });
    assert.equal(await page.getByText(secret).count(), 0, 'the secret is shown once only');

    // Its deliveries (made here as the dispatcher's fan-out would: no dispatcher runs), one replayed.
    const { rows } = await h.api.deps.db.pool.query(
      `INSERT INTO webhook_deliveries (endpoint_id, event_id, event_type, payload, status, attempts,
       last_status_code, last_error, deadline)
     VALUES ($1, 1, 'job.succeeded', '{}', 'succeeded', 1, 204, NULL, now()),
            ($1, 2, 'job.failed', '{}', 'failed', 9, 500, 'HTTP 500', now())
     RETURNING id, event_id`,
      [hook.id],
    );
    const failedId = rows.find((r: { event_id: string }) => String(r.event_id) === '2').id as string;
    await page.getByTestId('webhooks-table').getByRole('link', { name: url }).click();
    const deliveries = page.getByTestId('deliveries-table');
    await deliveries.locator('tr[data-status=succeeded]').waitFor();
    const failedRow = deliveries.locator(`tr[data-delivery-id="${failedId}"][data-status=failed]`);
    assert.match(await failedRow.innerText(), /job\.failed[\s\S]*500 HTTP 500/);
    await failedRow.getByRole('button', { name: 'Send job.failed #2 again' }).click();
    await page.getByTestId('replayed').waitFor();
    await deliveries.locator(`tr[data-delivery-id="${failedId}"][data-status=pending]`).waitFor();
    const replayed = (
      await tenant.as(h.http.get(`/v1/webhooks/${hook.id}/deliveries`)).expect(200)
    ).body.data.find((d: { id: string }) => d.id === failedId);
    assert.equal(replayed.status, 'pending', 'queued to be sent again');
    await screenshot('webhook-deliveries');
    assert.ok((await phoneOverflow(page)) <= 0, "the deliveries page fits a phone's width");

    // Deleting asks first; "Keep the webhook" keeps it.
    await page.getByRole('link', { name: '← Webhooks' }).click();
    const remove = page.getByRole('button', { name: `Delete the webhook to ${url}` });
    const confirm = page.getByRole('dialog', { name: 'Delete this webhook?' });
    await remove.click();
    await confirm.getByText('stop at once').waitFor();
    await confirm.getByRole('button', { name: 'Keep the webhook' }).click();
    await confirm.waitFor({ state: 'detached' });
    assert.equal((await listed()).length, 1);
    await remove.click();
    await confirm.getByRole('button', { name: 'Delete the webhook' }).click();
    await page.getByText('No webhooks yet.').waitFor();
    assert.deepEqual(await listed(), []);

    // A queued job's priority, changed from its page: the API has it, with its event.
    const job = (
      await tenant
        .as(h.http.post('/v1/jobs'))
        .send({ name: 'ui-prio', pool: 'nowhere', workflow: { task: { name: 'addition' } } })
        .expect(201)
    ).body;
    await page.goto(`${h.api.url}/ui/jobs/${job.id}`);
    const priority = page.getByLabel('Priority');
    await waitFor('the priority shown', async () => (await priority.inputValue()) === 'normal', 15_000);
    await priority.selectOption('high');
    await waitFor(
      'the priority changed',
      async () => (await tenant.as(h.http.get(`/v1/jobs/${job.id}`)).expect(200)).body.priority === 'high',

      15_000,
    );
    const events = (await tenant.as(h.http.get(`/v1/jobs/${job.id}/events`)).expect(200)).body.data;
    assert.ok(
      events.some(
        (e: { type: string; data: { from?: string; to?: string } }) =>
          e.type === 'job.priority_changed' && e.data.from === 'normal' && e.data.to === 'high',
      ),
      JSON.stringify(events.map((e: { type: string }) => e.type)),
    );
    await page.getByText('priority high').waitFor();
    assert.ok((await phoneOverflow(page)) <= 0, "the job page fits a phone's width");
    await tenant.as(h.http.post(`/v1/jobs/${job.id}/cancel`)).expect(200);

    assert.deepEqual(
      errors.filter((e) => !e.startsWith('console: Failed to load resource')),
      ['400 POST /v1/webhooks'],
    );
  },
);
