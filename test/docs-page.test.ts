// /docs in a real browser (Debian's chromium, driven by playwright-core): the reference renders every area of the
// document, its search finds an operation, and the page fetches nothing from outside the service.
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { after, before, test } from 'node:test';
import { chromium, type Browser } from 'playwright-core';
import { call, startApp, type TestApp } from './helpers.ts';

const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';
const missing = existsSync(CHROMIUM) ? false : `chromium is not installed at ${CHROMIUM} (apt-get install chromium, or set CHROMIUM_PATH)`;
if (missing) console.log(`# SKIPPED /docs browser test: ${missing}`);

let t: TestApp;
let url: string;
let browser: Browser;
before(async () => {
  if (missing) return;
  t = await startApp();
  url = await t.app.listen({ host: '127.0.0.1', port: 0 });
  browser = await chromium.launch({ executablePath: CHROMIUM, args: ['--no-sandbox'] });
});
after(async () => {
  await browser?.close();
  await t?.close();
});

test('the reference renders every tag, finds an operation by search, and loads nothing from outside', { skip: missing, timeout: 60_000 }, async () => {
  const doc = (await call(t.app, 'GET', '/openapi.json')).body;
  const page = await browser.newPage();
  const elsewhere: string[] = [];
  page.on('request', (request) => {
    if (!request.url().startsWith(url) && !request.url().startsWith('data:')) elsewhere.push(request.url());
  });
  await page.goto(`${url}/docs`);
  // The first area opens by itself; every area is listed in the sidebar.
  await page.getByText('List users').first().waitFor({ timeout: 30_000 });
  // Every area is an entry of the sidebar's navigation (not merely a word somewhere on the page).
  const sidebar = (await page.locator('.t-doc__sidebar').first().innerText()).split('\n').map((line) => line.trim());
  for (const tag of doc.tags.map((area: { name: string }) => area.name)) assert.ok(sidebar.includes(tag), `the area ${tag} is in the sidebar`);

  await page.getByRole('button', { name: 'Open Search' }).first().click();
  await page.keyboard.type('pick batch');
  const results = page.locator('[role=dialog]');
  await results.getByText('Start a pick batch for a released or partially shipped order').waitFor({ timeout: 10_000 });
  assert.match(await results.innerText(), /\/api\/v1\/pick-batches\/\{id\}\/ship/);

  assert.deepEqual(elsewhere, [], 'every request of the page goes to the service');
  await page.close();
});
