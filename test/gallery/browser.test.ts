// The gallery pages in headless Chromium against a real listening server: no console errors,
// every preview image loads, and "try it" yields a PDF. Screenshots land in test-output/.
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { type Browser, type Page } from 'playwright-core';
import { buildApp } from '../../src/app.js';
import type { App } from '../../src/http/types.js';
import { freePort, launchBrowser, SHOTS } from '../browser.js';
import { testServices, type TestServices } from '../helpers.js';



/** Console errors, uncaught exceptions and failed or 4xx/5xx requests of a page. */
function watch(page: Page): string[] {
  const problems: string[] = [];
  page.on('console', (msg) => {
    if (msg.type() === 'error') problems.push(`console: ${msg.text()}`);
  });
  page.on('pageerror', (err) => problems.push(`pageerror: ${err.message}`));
  page.on('requestfailed', (req) => problems.push(`failed: ${req.url()}`));
  page.on('response', (res) => {
    if (res.status() >= 400) problems.push(`${res.status()}: ${res.url()}`);
  });
  return problems;
}

async function allImagesLoaded(page: Page): Promise<void> {
  await page.evaluate(() => document.querySelectorAll('img').forEach((img) => (img.loading = 'eager')));
  await page.waitForFunction(() => Array.from(document.images).every((img) => img.complete), null, { timeout: 240_000 });
  const broken = await page.evaluate(() => Array.from(document.images).filter((img) => img.naturalWidth === 0).map((img) => img.src));
  assert.deepEqual(broken, []);
}

describe('gallery pages in Chromium', () => {
  let services: TestServices;
  let app: App;
  let browser: Browser;
  let base: string;

  before(async () => {
    const port = await freePort();
    base = `http://127.0.0.1:${port}`;
    services = await testServices({ env: { QUIRE_BASE_URL: base } });
    app = await buildApp(services);
    await app.listen({ port, host: '127.0.0.1' });
    browser = await launchBrowser();
  });
  after(async () => {
    await browser?.close();
    await app?.close();
    await services?.cleanup();
  });

  test('the index shows every category with its preview images', async () => {
    const page = await browser.newPage({ viewport: { width: 1280, height: 900 } });
    const problems = watch(page);
    await page.goto(`${base}/gallery`);
    assert.equal(await page.locator('section.category').count(), 10);
    assert.equal(await page.locator('.cards img').count(), services.gallery.templates.length);
    await allImagesLoaded(page);
    await page.screenshot({ path: join(SHOTS, 'gallery-index.png'), fullPage: true });
    assert.deepEqual(problems, []);
    await page.close();
  });

  test('a template page renders the sample data through "try it" into a PDF', async () => {
    const context = await browser.newContext({ viewport: { width: 1280, height: 900 } });
    const page = await context.newPage();
    page.on('popup', (popup) => void popup.close().catch(() => undefined));
    const problems = watch(page);
    await page.goto(`${base}/gallery/invoice-classic`);
    assert.equal(await page.locator('h1').textContent(), 'Invoice — Classic');
    assert.ok((await page.locator('table.fields tbody tr').count()) > 20);
    await allImagesLoaded(page);
    await page.screenshot({ path: join(SHOTS, 'gallery-invoice-classic.png'), fullPage: true });

    await page.selectOption('#try-color', 'burgundy');
    await page.click('#try-submit');
    await page.locator('#try-pdf').waitFor({ state: 'visible', timeout: 120_000 });
    assert.match((await page.locator('#try-status').textContent()) ?? '', /1 page in \d+ ms/);
    const href = await page.locator('#try-pdf').getAttribute('href');
    assert.ok(href?.startsWith(`${base}/api/v1/pdfs/`), String(href));
    const pdf = await page.request.get(href!);
    assert.equal(pdf.status(), 200);
    assert.equal((await pdf.body()).subarray(0, 5).toString(), '%PDF-');

    assert.equal(problems.length, 0, problems.join('\n'));

    // A schema error is shown to the user, not thrown (the 422 itself is expected).
    await page.fill('#try-data', '{"invoice_number": "X"}');
    await page.click('#try-submit');
    await page.locator('#try-status.error').waitFor({ timeout: 30_000 });
    assert.match((await page.locator('#try-status').textContent()) ?? '', /Missing: .*currency/);
    assert.equal(problems.filter((p) => p.startsWith('pageerror')).length, 0);
    await context.close();
  });
});
