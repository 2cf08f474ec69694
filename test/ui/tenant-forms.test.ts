/**
 * The tenant page's forms in a real browser against a real API: a quota field given something that
 * is not a whole number in its bounds (a fraction such as 2.5 too, which the field once turned into
 * 25) says so under that field and sends nothing; a weight outside the API's
 * bounds is refused under the weight field with the range.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import type { Browser } from 'playwright-core';
import { startHarness, type Harness } from '../helpers/api-harness.js';
import { waitFor } from '../helpers/cluster.js';
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

test('quota: not a whole number is said under its field, nothing sent; weight: the range', async () => {
  const t = await h.createTenant('ui-forms');
  const quota = (await h.admin(h.http.get(`/v1/tenants/${t.id}/quota`)).expect(200)).body;
  const { page, errors } = await openPage(browser);
  const sent: string[] = [];
  page.on('request', (r) => {
    if (r.method() !== 'GET') sent.push(`${r.method()} ${new URL(r.url()).pathname}`);
  });
  await page.goto(`${h.api.url}/ui/`);
  await page.getByLabel('API key').fill(h.adminKey);
  await page.getByRole('button', { name: 'Log in' }).click();
  await page.getByTestId('pools-table').waitFor();
  await page.getByRole('link', { name: 'Tenants' }).click();
  await page.getByTestId('tenants-table').getByRole('link', { name: 'ui-forms' }).click();
  const form = page.getByTestId('quota-form');
  const field = form.getByLabel('Max active jobs');
  await field.waitFor();
  sent.length = 0;

  // '2.5' and '0.5' once became 25 and 5 (the field dropped the point) and were sent.
  for (const typed of ['abc', '', '2.5', '0.5', '-1', '1000001']) {
    await field.fill(typed);
    await form.getByRole('button', { name: 'Save quota' }).click();
    await waitFor(
      `"${typed}" refused under its field`,
      async () => (await field.getAttribute('aria-invalid')) === 'true',
      15_000,
    );
    const said = await form.innerText();
    assert.match(said, /Enter a whole number from 0 to 1,000,000/, typed);
    assert.doesNotMatch(said, /expected number|received|NaN|null/, typed);
    assert.deepEqual(sent, [], `nothing was sent for "${typed}"`);
    // Letters are dropped as they are typed; a number is kept as typed, its point too.
    assert.equal(await field.inputValue(), typed === 'abc' ? '' : typed, 'the field keeps the number typed');
  }
  // The device-hours field takes fractions, and says so.
  const hours = form.getByLabel('Device-hours a month');
  await field.fill(String(quota.maxActiveJobs));
  await hours.fill('lots');
  await form.getByRole('button', { name: 'Save quota' }).click();
  await waitFor(
    'device-hours refused',
    async () => (await hours.getAttribute('aria-invalid')) === 'true',
    15_000,
  );
  assert.match(await form.innerText(), /Enter a number from 0 to 1,000,000,000/);
  assert.equal(
    await field.getAttribute('aria-invalid'),
    null,
    'the field that is now right is no longer refused',
  );
  assert.deepEqual(sent, []);
  // Corrected, it is saved.
  await field.fill('9');
  await hours.fill('12.5');
  await form.getByRole('button', { name: 'Save quota' }).click();
  await form.getByTestId('quota-saved').waitFor();
  assert.deepEqual((await h.admin(h.http.get(`/v1/tenants/${t.id}/quota`)).expect(200)).body, {
    ...quota,
    maxActiveJobs: 9,
    deviceHoursPerMonth: 12.5,
  });

  // A weight the API refuses: its range under the field, and the weight unchanged.
  const weight = page.getByTestId('weight-form');
  const weightField = weight.getByLabel('Fair-share weight');
  assert.match(await weight.innerText(), /0\.01 to 1000/, 'the field says its range');
  await weightField.fill('0.000000001');
  await weight.getByRole('button', { name: 'Save weight' }).click();
  await waitFor(
    'the weight refused',
    async () => (await weightField.getAttribute('aria-invalid')) === 'true',
    15_000,
  );
  assert.match(await weight.innerText(), /must be a number between 0\.01 and 1000/);
  assert.equal((await h.admin(h.http.get(`/v1/tenants/${t.id}`)).expect(200)).body.weight, 1);

  assert.deepEqual(
    errors.filter((e) => !e.startsWith('console: Failed to load resource')),
    [`400 PATCH /v1/tenants/${t.id}`],
  );
});
