/**
 * The dashboard in a real browser against a real cluster (API, scheduler, one worker daemon with
 * one device): a tenant logs in with its API key, submits a job from the UI, watches it reach
 * `running` and draw its reward curve (a flat KL on a sensible axis), its checkpoints newest first;
 * a second job joins it on the same device, and the admin's pool page shows the two alternating on
 * that device's lock timeline, its times readable on a phone (usage with its jobs by status, a job's
 * address opened by the admin, tenants and nodes are visited on the way); a running job paused from
 * its page waits as paused, runs again when resumed, and is cancelled only once that is confirmed;
 * a job no node of its pool can hold says so. Screenshots go to test-artifacts/ui/; no console error
 * may appear.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import path from 'node:path';
import type { Browser } from 'playwright-core';
import { startCluster, steadyJob, waitFor, type Cluster } from '../helpers/cluster.js';
import { artifactsDir, buildDashboard, launchBrowser, openPage } from '../helpers/browser.js';

let c: Cluster;
let browser: Browser;

before(async () => {
  buildDashboard();
  // Two jobs may share the one device whatever their planned load (the picture is under test here).
  c = await startCluster({ maxJobsPerDevice: 2, env: { TIMESHARE_MAX_GROUP_LOAD: '2' } });
  await c.startWorker('ui-node', 1);
  browser = await launchBrowser();
});
after(async () => {
  await browser?.close();
  await c?.close();
});

test(
  'log in, submit, watch the curve, see two jobs take turns on one device',
  { timeout: 120_000 },
  async () => {
    const tenant = await c.h.createTenant('ui-tenant');
    const { page, errors, screenshot } = await openPage(browser);
    const ui = `${c.h.api.url}/ui/`;
    // The page's own clock, running as the real one does, so that the test can bring a refresh due
    // in a few seconds forward (the job's every 5 s) where it waits for one.
    await page.clock.install();

    await page.goto(ui);
    // Spaces only, and a key that is neither a tenant's nor the admin's: each says what is wrong.
    for (const [key, said] of [
      ['   ', 'enter an API key'],
      ['not-the-admin-key', "neither a tenant API key (tsk_…) nor this system's admin key"],
    ]) {
      await page.getByLabel('API key').fill(key!);
      await page.getByRole('button', { name: 'Log in' }).click();
      await page.getByTestId('login-error').filter({ hasText: said! }).waitFor();
    }
    await page.getByLabel('API key').fill('tsk_not-a-key');
    await page.getByRole('button', { name: 'Log in' }).click();
    await page.getByTestId('login-error').filter({ hasText: 'invalid' }).waitFor();
    await page.getByLabel('API key').fill(tenant.apiKey);
    await page.getByRole('button', { name: 'Log in' }).click();
    await page.getByTestId('jobs-table').waitFor();
    // The header says who is logged in: the tenant, by name (it said "tenant").
    assert.equal(await page.getByTestId('who').innerText(), 'ui-tenant');

    await page.getByTestId('open-submit').click();
    // A refused spec names its field.
    await page
      .getByLabel('Job spec (JSON)')
      .fill(JSON.stringify({ name: 'bad', workflow: { task: { name: 'nope' } } }));
    await page.getByTestId('submit-job').click();
    const refusal = await page.getByTestId('submit-error').innerText();
    assert.match(refusal, /workflow\.task\.name/);
    assert.doesNotMatch(refusal, /workflow\.task\.name: workflow\.task\.name/, 'the field named once');
    // Those two refusals were provoked; Chromium logs every failed request as a console error.
    assert.deepEqual(
      errors.filter((e) => !e.startsWith('console: Failed to load resource')),
      ['401 GET /v1/pools', '401 POST /v1/auth/token', '400 POST /v1/jobs'],
    );
    errors.length = 0;
    await page.getByLabel('Job spec (JSON)').fill(JSON.stringify(steadyJob('ui-first', 400)));
    await page.getByLabel('Job spec (JSON)').press('Control+Enter');
    await page.waitForURL(/\/ui\/jobs\/[0-9a-f-]{36}$/);
    const firstId = page.url().split('/').pop()!;

    await page.locator('[data-testid=job-status][data-status=running]').waitFor({ timeout: 60_000 });
    // A second job for the same device: the scheduler time-shares it with the first.
    const second = await tenant.as(c.h.http.post('/v1/jobs')).send(steadyJob('ui-second', 400)).expect(201);
    await page
      .locator('[data-testid=chart-reward_mean]:not([data-points="0"]):not([data-points="1"])')
      .waitFor({
        timeout: 60_000,
      });
    assert.ok((await page.locator('[data-testid=events-table] tr').count()) >= 3, 'events listed');
    // Its progress, refreshed with the job: a step past the first, of the spec's steps.
    await page
      .getByTestId('progress')
      .filter({ hasText: /^Step [1-9]\d* of \d+/ })
      .waitFor({ timeout: 30_000 });
    const [download] = await Promise.all([
      page.waitForEvent('download'),
      page.getByTestId('download-checkpoint').first().click(),
    ]);
    assert.match(download.suggestedFilename(), /^ui-first-step\d+\.safetensors$/);
    await page.getByText('saved, sha256 verified').waitFor();
    // Newest checkpoint first (the one people download); they were listed oldest first.
    const checkpointRows = page.getByTestId('checkpoints-table').locator('tbody tr');
    await waitFor('two checkpoints listed', async () => (await checkpointRows.count()) >= 2, 60_000);
    const steps = (await checkpointRows.locator('td:first-child').allInnerTexts()).map(Number);
    assert.deepEqual(
      steps,
      [...steps].sort((a, b) => b - a),
      `checkpoint steps in the order listed: ${steps.join(', ')}`,
    );
    // KL stays 0 without a klCoef: its axis is ±1 around the line, not 0–100.
    const klValues = (
      await tenant.as(c.h.http.get(`/v1/jobs/${firstId}/metrics?name=kl`)).expect(200)
    ).body.data.map((p: { value: unknown }) => p.value);
    assert.ok(klValues.length > 0 && klValues.every((v: unknown) => v === 0), `kl: ${klValues.join(', ')}`);
    const klAxis = page.getByTestId('chart-kl').locator('[data-y-max]');
    await klAxis.waitFor();
    await waitFor(
      'the flat KL curve on a ±1 axis',
      async () =>
        (await klAxis.getAttribute('data-y-min')) === '-1' &&
        (await klAxis.getAttribute('data-y-max')) === '1',
      15_000,
    ).catch(async (err: Error) => {
      const range = [await klAxis.getAttribute('data-y-min'), await klAxis.getAttribute('data-y-max')];
      throw new Error(`${err.message}: the axis is ${range.join(' to ')}`);
    });
    await screenshot('job-page');
    // Loaded by its address (a reload, a shared link), the page stays (the router sent it to the list).
    await page.reload();
    await page.locator('[data-testid=job-status]').waitFor();
    assert.match(page.url(), new RegExp(`/ui/jobs/${firstId}$`));
    // A token the API refuses before its expiry (the API restarted with another signing secret) is
    // renewed from the key once, and the page goes on; every page answered "invalid or expired
    // token" until the user logged in again.
    errors.length = 0;
    // (A string: it runs in the page, whose globals this file's types do not have.)
    await page.evaluate(`(() => {
      const s = JSON.parse(sessionStorage.getItem('timeshare.session'));
      sessionStorage.setItem('timeshare.session', JSON.stringify({ ...s, token: s.token + 'x' }));
    })()`);
    await page.reload();
    await page.locator('[data-testid=job-status]').waitFor();
    assert.ok(
      errors.some((e) => e.startsWith(`401 GET /v1/jobs/${firstId}`)),
      `refused first: ${JSON.stringify(errors)}`,
    );
    assert.equal(await page.getByTestId('job-error').count(), 0);
    // The job's refresh failing (the API unreachable): said over the last figures, gone once it is back.
    const jobUrl = `**/v1/jobs/${firstId}`;
    await page.route(jobUrl, (r) => r.abort());
    // Its next refresh, now rather than up to 5 s on: it fails, and then succeeds.
    await page.clock.fastForward(5_000);
    await page.getByTestId('job-stale').waitFor({ timeout: 30_000 });
    await page.unroute(jobUrl);
    await page.clock.fastForward(5_000);
    await page.getByTestId('job-stale').waitFor({ state: 'detached', timeout: 30_000 });
    errors.length = 0;
    // A job that is not there: said once, with the way back, and nothing asked again.
    await page.goto(`${ui}jobs/00000000-0000-4000-8000-000000000000`);
    await page.getByTestId('job-error').waitFor();
    await page.waitForTimeout(4_000);
    assert.deepEqual(
      errors.filter((e) => !e.startsWith('console: Failed to load resource')),
      ['404 GET /v1/jobs/00000000-0000-4000-8000-000000000000'],
    );
    errors.length = 0;

    await page.getByRole('link', { name: '← Jobs' }).click();
    await page.locator(`tr[data-job-id="${second.body.id}"]`).waitFor();
    await screenshot('jobs');
    await page.getByRole('link', { name: 'Quota and usage' }).click();
    await page.getByTestId('usage').getByText('Active jobs').waitFor();
    // Its jobs by status (of those that held devices this month): the two running ones.
    const runningCount = page.locator('[data-testid=usage-status][data-status=running]');
    await runningCount.waitFor({ timeout: 30_000 });
    assert.ok(Number(await runningCount.getAttribute('data-count')) >= 1);
    await screenshot('usage');

    // The admin's view of the pool.
    await page.getByTestId('logout').click();
    await page.getByLabel('API key').fill(c.h.adminKey);
    await page.getByRole('button', { name: 'Log in' }).click();
    await page.getByTestId('pools-table').waitFor();
    // A job's address (a link a tenant shared): the API lets only its tenant read it, which the page
    // says, and asks the API nothing; it sent the admin back to the pools without a word.
    await page.goto(`${ui}jobs/${firstId}`);
    await page.getByTestId('admin-job').filter({ hasText: 'only the tenant' }).waitFor();
    assert.match(page.url(), new RegExp(`/ui/jobs/${firstId}$`));
    await page.getByRole('link', { name: '← Pools' }).click();
    await page.getByTestId('pools-table').getByRole('link', { name: 'default' }).click();
    const timeline = page.locator('[data-testid=lock-timeline]');
    await waitFor(
      'two jobs taking turns on the timeline',
      async () =>
        Number(await timeline.getAttribute('data-jobs')) >= 2 &&
        Number(await timeline.getAttribute('data-switches')) >= 4,
      60_000,
    );
    const legend = await timeline.getByTestId('timeline-job').allInnerTexts();
    assert.ok(
      legend.some((l) => l.includes('ui-first (ui-tenant)')),
      legend.join(', '),
    );
    assert.ok(
      legend.some((l) => l.includes('ui-second (ui-tenant)')),
      legend.join(', '),
    );
    assert.equal(await timeline.getByTestId('device-lane').count(), 1);
    await screenshot('pool-timeline');
    // The picture README.md shows (docs/pool-timeline.png is a copy of one).
    await page
      .locator('.mantine-Card-root')
      .filter({ has: timeline })
      .screenshot({ path: path.join(artifactsDir, 'ui', 'pool-timeline-card.png') });

    await page.reload();
    await timeline.waitFor();
    assert.match(page.url(), /\/ui\/pools\/default$/);

    await page.getByRole('link', { name: 'Tenants' }).click();
    await page.getByTestId('tenants-table').getByText('ui-tenant').waitFor();
    await page.getByRole('link', { name: 'Nodes' }).click();
    await page.getByTestId('nodes-table').getByText('ui-node').waitFor();
    await page.getByRole('link', { name: 'Pools and queues' }).click();
    await page.getByTestId('pools-table').getByRole('link', { name: 'default' }).click();

    // On a phone the page reflows instead of overflowing sideways.
    await page.setViewportSize({ width: 390, height: 844 });
    await timeline.waitFor();
    // The navigation bar slides away (a CSS transition) before the screenshot.
    const navbar = page.locator('.mantine-AppShell-navbar');
    await waitFor('the navigation to slide away', async () => {
      const box = await navbar.boundingBox();
      return box !== null && box.x + box.width <= 0;
    });
    const overflow = Number(await page.evaluate('document.documentElement.scrollWidth - window.innerWidth'));
    assert.ok(overflow <= 0, `the pool page is ${overflow}px wider than a phone's screen`);
    // The timeline's times stay apart on one line (five of them ran into each other).
    const ticks: { x: number; y: number; width: number }[] = [];
    for (const tick of await timeline.getByTestId('timeline-tick').all())
      if (await tick.isVisible()) ticks.push((await tick.boundingBox())!);
    assert.ok(ticks.length >= 2, `${ticks.length} times under the timeline`);
    for (let i = 1; i < ticks.length; i++) {
      const [left, right] = [ticks[i - 1]!, ticks[i]!];
      assert.equal(right.y, left.y, 'the times on one line');
      assert.ok(right.x - (left.x + left.width) >= 8, `times ${i} and ${i + 1} are apart`);
    }
    await screenshot('pool-timeline-phone');

    for (const id of [firstId, second.body.id as string])
      await tenant.as(c.h.http.post(`/v1/jobs/${id}/cancel`)).expect(200);
    assert.deepEqual(errors, []);
  },
);

test(
  'pause a running job from its page, see it wait as paused, resume it',
  { timeout: 120_000 },
  async () => {
    const tenant = await c.h.createTenant('ui-pauser');
    const { page, errors } = await openPage(browser);
    await page.goto(`${c.h.api.url}/ui/`);
    await page.getByLabel('API key').fill(tenant.apiKey);
    await page.getByRole('button', { name: 'Log in' }).click();
    await page.getByTestId('jobs-table').waitFor();
    const id = (await tenant.as(c.h.http.post('/v1/jobs')).send(steadyJob('ui-paused', 400)).expect(201)).body
      .id as string;
    await page.goto(`${c.h.api.url}/ui/jobs/${id}`);
    await page.locator('[data-testid=job-status][data-status=running]').waitFor({ timeout: 60_000 });

    await page.getByTestId('pause-job').filter({ hasText: 'Pause' }).click();
    // It checkpoints, gives its device back and waits, paused: the page follows its events.
    await page
      .getByTestId('queue-info')
      .filter({ hasText: 'paused by its tenant' })
      .waitFor({ timeout: 60_000 });
    await page.getByTestId('pause-job').filter({ hasText: 'Resume' }).click();
    await page.locator('[data-testid=job-status][data-status=running]').waitFor({ timeout: 60_000 });
    await page.getByTestId('pause-job').filter({ hasText: 'Pause' }).waitFor();

    // More jobs than a page (50, waiting in a pool with no nodes): the list pages back to the older
    // one and filters by status; it showed the newest 50 only.
    await c.h
      .admin(c.h.http.put(`/v1/tenants/${tenant.id}/quota`))
      .send({ maxActiveJobs: 100 })
      .expect(200);
    // Submitted side by side (a tenant's submissions queue on its quota row; their order among
    // themselves is not under test, only that all are newer than the paused one).
    await Promise.all(
      Array.from({ length: 50 }, (_, i) =>
        tenant
          .as(c.h.http.post('/v1/jobs'))
          .send({ name: `waiting-${i}`, pool: 'nowhere', workflow: { task: { name: 'addition' } } })
          .expect(201),
      ),
    );
    await page.goto(`${c.h.api.url}/ui/`);
    await page.locator('[data-job-id]').nth(49).waitFor();
    assert.equal(await page.locator(`[data-job-id="${id}"]`).count(), 0, 'not on the first page');
    await page.getByTestId('older-jobs').click();
    await page.locator(`[data-job-id="${id}"]`).waitFor();
    assert.equal(await page.locator('[data-job-id]').count(), 1);
    await page.getByTestId('newer-jobs').click();
    await page.locator('[data-job-id]').nth(49).waitFor();
    await page.getByTestId('status-filter').click();
    await page.getByRole('option', { name: 'running' }).click();
    await page.locator(`[data-job-id="${id}"]`).waitFor();
    await page.waitForFunction("document.querySelectorAll('[data-job-id]').length === 1");

    // Cancel asks first; Escape and "Keep the job" keep it (one click cancelled it).
    const cancels: string[] = [];
    page.on('request', (r) => {
      if (r.url().endsWith('/cancel')) cancels.push(r.url());
    });
    await page.locator(`[data-job-id="${id}"]`).getByRole('link').click();
    await page.locator('[data-testid=job-status][data-status=running]').waitFor();
    const confirm = page.getByRole('dialog', { name: 'Cancel ui-paused?' });
    await page.getByTestId('cancel-job').click();
    await confirm.waitFor();
    await page.keyboard.press('Escape');
    await confirm.waitFor({ state: 'detached' });
    await page.getByTestId('cancel-job').click();
    await confirm.getByRole('button', { name: 'Keep the job' }).click();
    await confirm.waitFor({ state: 'detached' });
    assert.deepEqual(cancels, []);
    assert.equal((await tenant.as(c.h.http.get(`/v1/jobs/${id}`)).expect(200)).body.status, 'running');
    await page.getByTestId('cancel-job').click();
    await confirm.getByTestId('confirm-cancel').click();
    await page.locator('[data-testid=job-status][data-status=cancelled]').waitFor({ timeout: 30_000 });
    assert.equal(cancels.length, 1);
    assert.deepEqual(errors, []);
  },
);

test('a job no node of its pool can hold says so, and why', { timeout: 60_000 }, async () => {
  const tenant = await c.h.createTenant('ui-oversized');
  const { page, errors, screenshot } = await openPage(browser);
  await page.goto(`${c.h.api.url}/ui/`);
  await page.getByLabel('API key').fill(tenant.apiKey);
  await page.getByRole('button', { name: 'Log in' }).click();
  await page.getByTestId('jobs-table').waitFor();
  // The pool's one node has one device of 256 MiB: one job wants two devices, the other 1 GiB a device.
  const wide = (
    await tenant
      .as(c.h.http.post('/v1/jobs'))
      .send({ name: 'too-wide', resources: { devices: 2 }, workflow: { task: { name: 'addition' } } })
      .expect(201)
  ).body.id as string;
  const big = (
    await tenant
      .as(c.h.http.post('/v1/jobs'))
      .send({
        name: 'too-big',
        resources: { devices: 1, memoryPerDeviceMiB: 1024 },
        workflow: { task: { name: 'addition' } },
      })
      .expect(201)
  ).body.id as string;
  for (const id of [wide, big])
    await page.locator(`[data-job-id="${id}"]`).getByTestId('queue-no-node').waitFor({ timeout: 30_000 });

  await page.goto(`${c.h.api.url}/ui/jobs/${wide}`);
  const notice = page.getByTestId('no-node-holds');
  await notice.filter({ hasText: 'No node of pool default can hold this job' }).waitFor({ timeout: 30_000 });
  assert.match(await notice.innerText(), /asks for 2 devices\. No node of the pool has that many devices/);
  assert.doesNotMatch(await page.getByTestId('queue-info').innerText(), /waiting for free devices/);
  await screenshot('job-no-node');
  await page.goto(`${c.h.api.url}/ui/jobs/${big}`);
  await notice.filter({ hasText: 'asks for 1 device.' }).waitFor({ timeout: 30_000 });
  assert.match(await notice.innerText(), /the memory the job needs on each \(1,024 MiB, as its spec asks\)/);

  for (const id of [wide, big]) await tenant.as(c.h.http.post(`/v1/jobs/${id}/cancel`)).expect(200);
  assert.deepEqual(errors, []);
});
