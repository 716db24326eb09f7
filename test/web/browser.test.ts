// The studio, sign-up and dashboard in headless Chromium against a real listening server.
// Screenshots land in test-output/ for review.
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { crc32, deflateSync, inflateRawSync } from 'node:zlib';
import { type Browser, type BrowserContext, type Page } from 'playwright-core';
import { after, before, describe, it } from 'node:test';
import { buildApp } from '../../src/app.js';
import type { App } from '../../src/http/types.js';
import { freePort, launchBrowser, SHOTS } from '../browser.js';
import { createAccount, HELLO, testServices, type TestServices } from '../helpers.js';
import { makeCa, makeLeaf, p12 } from '../signing/pki.js';

const ROOT = join(import.meta.dirname, '..', '..');


/** A solid-colour RGB PNG, built by hand so the test needs no image files. */
/** Opens the studio as a signed-in Starter user and replaces the editor's text with `source`. */
async function typeInStudio(page: Page, url: string, source: string): Promise<void> {
  await page.goto(url);
  await page.locator('.cm-content').waitFor();
  await page.waitForFunction(() => /Starter plan/.test(document.querySelector('#quota')?.textContent ?? ''));
  await page.locator('.cm-content').click();
  await page.keyboard.press('Control+A');
  await page.keyboard.insertText(source);
}

function png(width: number, height: number, rgb: [number, number, number]): Buffer {
  const chunk = (type: string, data: Buffer) => {
    const body = Buffer.concat([Buffer.from(type, 'ascii'), data]);
    const out = Buffer.alloc(body.length + 8);
    out.writeUInt32BE(data.length, 0);
    body.copy(out, 4);
    out.writeUInt32BE(crc32(body), body.length + 4);
    return out;
  };
  const header = Buffer.alloc(13);
  header.writeUInt32BE(width, 0);
  header.writeUInt32BE(height, 4);
  header.set([8, 2, 0, 0, 0], 8);
  const row = Buffer.concat([Buffer.from([0]), Buffer.from(Array.from({ length: width }, () => rgb).flat())]);
  const pixels = deflateSync(Buffer.concat(Array.from({ length: height }, () => row)));
  return Buffer.concat([Buffer.from([137, 80, 78, 71, 13, 10, 26, 10]), chunk('IHDR', header), chunk('IDAT', pixels), chunk('IEND', Buffer.alloc(0))]);
}

const TITLE_DOC = String.raw`\documentclass{article}
\begin{document}
\section*{Studio round trip}
Opened from a studio link.
\end{document}
`;

// Line 5 uses \textcolor without xcolor: an undefined command the diagnosis ties to xcolor.
const BROKEN_DOC = String.raw`\documentclass{article}
\usepackage[T1]{fontenc}
\begin{document}
Some text first.
\textcolor{red}{This needs xcolor.}
\end{document}
`;

// A transparency group: pdflatex writes it, PDF/A-1b forbids it, PDFBox Preflight says so.
const TRANSPARENT_DOC = String.raw`\documentclass{article}
\begin{document}
See through.\pdfpageresources{/ExtGState << /T << /ca 0.5 >> >>}\pdfliteral{/T gs}
\end{document}
`;

// Line 4: an undefined command TeX can recover from; line 5: an undefined reference (a warning).
const RECOVERABLE_DOC = String.raw`\documentclass{article}
\begin{document}
Some text first.
Text \undefinedmacro after it.
See \ref{nowhere}.
\end{document}
`;

interface Watched {
  page: Page;
  /** Console errors and uncaught exceptions, minus the HTTP statuses the test expects. */
  problems: string[];
}

describe('studio, sign-up and dashboard in Chromium', () => {
  let services: TestServices;
  let app: App;
  let browser: Browser;
  let base: string;
  const contexts: BrowserContext[] = [];

  before(async () => {
    execFileSync(process.execPath, [join(ROOT, 'scripts', 'build-web.mjs')], { cwd: ROOT, stdio: 'pipe' });
    const port = await freePort();
    base = `http://127.0.0.1:${port}`;
    services = await testServices({ env: { QUIRE_SIGNUP: 'open', QUIRE_BASE_URL: base, PORT: String(port) } });
    app = await buildApp(services);
    await app.listen({ host: '127.0.0.1', port });
    browser = await launchBrowser();
  });

  after(async () => {
    for (const context of contexts) await context.close();
    await browser?.close();
    await app?.close();
    await services?.cleanup();
  });

  /** A fresh browser profile; `expected` lists "status path" pairs the page may legitimately get. */
  async function open(expected: string[] = [], viewport = { width: 1280, height: 800 }): Promise<Watched> {
    const context = await browser.newContext({ viewport });
    contexts.push(context);
    const page = await context.newPage();
    const problems: string[] = [];
    const statuses: string[] = [];
    page.on('response', (res) => {
      if (res.status() >= 400) statuses.push(`${res.status()} ${new URL(res.url()).pathname}`);
    });
    page.on('console', (msg) => {
      if (msg.type() !== 'error') return;
      // Chromium logs every 4xx fetch; those the test provokes on purpose are not faults.
      const status = /status of (\d{3})/.exec(msg.text())?.[1];
      const path = msg.location().url ? new URL(msg.location().url).pathname : '';
      if (status && expected.includes(`${status} ${path}`)) return;
      problems.push(`console: ${msg.text()} (${msg.location().url})`);
    });
    page.on('pageerror', (err) => problems.push(`pageerror: ${err.message}`));
    page.on('requestfailed', (req) => problems.push(`request failed: ${req.url()} ${req.failure()?.errorText}`));
    return { page, problems };
  }

  async function api(path: string, body: unknown, key?: string): Promise<{ status: number; json: Record<string, unknown> }> {
    const res = await fetch(base + path, {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...(key ? { authorization: `Bearer ${key}` } : {}) },
      body: JSON.stringify(body),
    });
    return { status: res.status, json: (await res.json()) as Record<string, unknown> };
  }

  /** Visible controls a screen reader could not name: should always be empty. */
  // A string, not a function: tsx would wrap a named inner function in a helper the page lacks.
  const UNLABELLED = `(() => {
    const named = (el) => {
      const by = el.getAttribute('aria-labelledby');
      if (el.getAttribute('aria-label')?.trim()) return true;
      if (by && by.split(/\\s+/).some((id) => document.getElementById(id)?.textContent?.trim())) return true;
      if (el.labels?.length) return true;
      return ['BUTTON', 'A'].includes(el.tagName) && Boolean(el.textContent?.trim());
    };
    return [...document.querySelectorAll('input, select, textarea, button, a[href], [contenteditable="true"]')]
      .filter((el) => el.offsetParent !== null && !named(el))
      .map((el) => el.outerHTML.slice(0, 120));
  })()`;
  const unlabelled = (page: Page) => page.evaluate<string[]>(UNLABELLED);

  const editorText = (page: Page) => page.locator('.cm-content').innerText();

  /** True when the first rendered page has dark (text) pixels on it. */
  async function pageHasInk(page: Page): Promise<boolean> {
    return page.locator('canvas.pdf-page').first().evaluate((canvas: HTMLCanvasElement) => {
      const data = canvas.getContext('2d')!.getImageData(0, 0, canvas.width, canvas.height).data;
      let dark = 0;
      for (let i = 0; i < data.length; i += 4) if (data[i]! < 160 && data[i + 1]! < 160 && data[i + 2]! < 160) dark++;
      return dark > 50;
    });
  }

  it('serves pages with a CSP and hashed, precompressed, immutable bundles', async () => {
    const page = await fetch(`${base}/studio`);
    assert.equal(page.status, 200);
    assert.match(page.headers.get('content-type')!, /^text\/html/);
    assert.match(page.headers.get('content-security-policy')!, /script-src 'self'/);
    const html = await page.text();
    const script = /<script type="module" src="\/build\/([^"]+)"/.exec(html)![1]!;
    const js = await fetch(`${base}/build/${script}`, { headers: { 'accept-encoding': 'br' } });
    assert.equal(js.status, 200);
    assert.equal(js.headers.get('content-type'), 'text/javascript; charset=utf-8');
    assert.equal(js.headers.get('cache-control'), 'public, max-age=31536000, immutable');
    assert.equal(js.headers.get('content-encoding'), 'br');
    for (const bad of ['../package.json', '..%2Fpackage.json', 'manifest.json%00.js', 'nope.js']) {
      assert.equal((await fetch(`${base}/build/${bad}`)).status, 404, bad);
    }
  });

  it('opens a real studio_url, compiles, renders; then diagnoses a break, applies the package fix and recompiles', async (t) => {
    const owner = await createAccount(services, 'starter');
    const compiled = await api('/api/v1/compile', { latex: TITLE_DOC, compiler: 'pdflatex' }, owner.key);
    assert.equal(compiled.status, 200, JSON.stringify(compiled.json));
    const studioUrl = String(compiled.json.studio_url);
    assert.ok(studioUrl.startsWith(`${base}/studio#src=`), studioUrl);

    // Anonymous visitor: the link carries the source, the studio shows the daily allowance.
    const { page, problems } = await open(['422 /api/v1/compile']);
    let started = Date.now();
    await page.goto(studioUrl);
    await page.locator('.cm-content').waitFor();
    t.diagnostic(`studio link to editor ready: ${Date.now() - started} ms`);
    assert.equal((await editorText(page)).trim(), TITLE_DOC.trim());
    assert.match(await page.locator('#quota').innerText(), /3 of 3 compiles left today/);
    assert.equal(await page.locator('#compiler').inputValue(), 'pdflatex');

    await page.locator('.cm-content').click();
    started = Date.now();
    await page.keyboard.press('Control+Enter');
    await page.locator('canvas.pdf-page').waitFor();
    t.diagnostic(`Ctrl+Enter to rendered page (compile included): ${Date.now() - started} ms`);
    assert.match(await page.locator('#status').innerText(), /Compiled 1 page/);
    assert.match(await page.locator('#quota').innerText(), /2 of 3 compiles left today/);
    assert.ok(await pageHasInk(page), 'the rendered page is blank');
    assert.equal(await page.locator('canvas.pdf-page').getAttribute('aria-label'), 'Page 1 of 1');
    await page.screenshot({ path: join(SHOTS, 'studio-success.png') });
    assert.deepEqual(await unlabelled(page), []);

    // Break it: \textcolor without xcolor on line 5.
    await page.locator('.cm-content').click();
    await page.keyboard.press('Control+A');
    await page.keyboard.insertText(BROKEN_DOC);
    await page.locator('#compile').click();
    const diagnosis = page.locator('#diagnosis');
    await diagnosis.waitFor();
    assert.match(await diagnosis.locator('h3').innerText(), /on line 5$/);
    assert.match(await diagnosis.innerText(), /xcolor/);
    const marked = page.locator('.cm-line.cm-error-line');
    assert.equal(await marked.count(), 1);
    assert.match(await marked.innerText(), /\\textcolor\{red\}/);
    assert.match(await page.locator('#quota').innerText(), /2 of 3 compiles left today/, 'a failed compile costs nothing');
    await page.screenshot({ path: join(SHOTS, 'studio-error.png') });
    assert.deepEqual(await unlabelled(page), []);

    const fix = page.locator('#apply-fix');
    assert.equal(await fix.innerText(), 'Add \\usepackage{xcolor}');
    await fix.click();
    assert.equal(await diagnosis.isHidden(), true, `${await page.locator('#status').innerText()} ${problems.join('; ')}`);
    const fixed = await editorText(page);
    assert.match(fixed, /\\usepackage\[T1\]\{fontenc\}\n\\usepackage\{xcolor\}\n\\begin\{document\}/);
    assert.equal(await page.evaluate(() => document.activeElement?.id), 'compile');
    await page.keyboard.press('Enter');
    await page.waitForFunction(() => document.querySelector('#status')?.textContent?.startsWith('Compiled'));
    assert.equal(await page.locator('.cm-error-line').count(), 0);
    assert.match(await page.locator('#quota').innerText(), /1 of 3 compiles left today/);
    await page.screenshot({ path: join(SHOTS, 'studio-fixed.png') });
    assert.ok(await pageHasInk(page), 'the recompiled page is blank');
    // The fragment now holds the fixed source, so a reload or a shared link keeps it.
    await page.reload();
    await page.locator('.cm-content').waitFor();
    assert.match(await editorText(page), /\\usepackage\{xcolor\}/);
    assert.deepEqual(problems, []);
  });

  it('signs up, shows the key once, and the dashboard signs in with it; rotation replaces it', async () => {
    const { page, problems } = await open();
    await page.goto(`${base}/signup`);
    await page.getByLabel('Email address').fill('reader@example.com');
    await page.getByRole('button', { name: 'Create account' }).click();
    const key = page.locator('#new-key');
    await key.waitFor();
    const apiKey = await key.innerText();
    assert.match(apiKey, /^svc_[0-9a-f]{48}$/);
    assert.equal(await page.evaluate(() => document.activeElement?.id), 'signup-result');
    await page.screenshot({ path: join(SHOTS, 'signup.png') });
    assert.deepEqual(await unlabelled(page), []);
    assert.equal((await services.accounts.byEmail('reader@example.com')).plan, 'free');

    // A fresh browser signs in on the dashboard with that key.
    const fresh = await open(['401 /api/v1/usage']);
    fresh.page.on('dialog', (d) => void d.accept());
    await fresh.page.goto(`${base}/dashboard`);
    await fresh.page.getByRole('textbox', { name: 'API key', exact: true }).fill(apiKey);
    await fresh.page.getByRole('button', { name: 'Sign in' }).click();
    await fresh.page.locator('#panels').waitFor();
    assert.equal(await fresh.page.locator('#plan-badge').textContent(), 'free plan');
    assert.match(await fresh.page.locator('#meters').innerText(), /Compiles this month\s*0 of 50/);
    assert.equal(await fresh.page.locator('#key-prefix').innerText(), apiKey.slice(0, 12));
    assert.match(await fresh.page.locator('#templates').innerText(), /paid plans/);

    await fresh.page.getByRole('button', { name: 'Rotate key' }).click();
    await fresh.page.locator('#rotated').waitFor();
    const rotated = await fresh.page.locator('#rotated-key').innerText();
    assert.match(rotated, /^svc_[0-9a-f]{48}$/);
    assert.notEqual(rotated, apiKey);
    await fresh.page.waitForFunction((p) => document.querySelector('#key-prefix')?.textContent === p, rotated.slice(0, 12));
    assert.equal((await fetch(`${base}/api/v1/usage`, { headers: { 'x-api-key': apiKey } })).status, 401);
    // The studio's "Use API key" dialog checks a key before keeping it.
    const studio = await open(['401 /api/v1/usage']);
    await studio.page.goto(`${base}/studio`);
    await studio.page.getByRole('button', { name: 'Use API key' }).click();
    const keyField = studio.page.getByRole('dialog').getByLabel('API key', { exact: true });
    await keyField.fill('svc_' + '0'.repeat(48));
    await studio.page.getByRole('button', { name: 'Use key' }).click();
    await studio.page.getByText('That key is not valid').waitFor();
    await keyField.fill(rotated);
    await studio.page.getByRole('button', { name: 'Use key' }).click();
    await studio.page.locator('#account .who').waitFor();
    assert.equal(await studio.page.locator('#account .who').innerText(), 'reader@example.com · free');
    assert.match(await studio.page.locator('#quota').innerText(), /Free plan: 0 of 50 compiles used this month/);
    assert.equal(await studio.page.locator('#compiler option[value=xelatex]').isDisabled(), false);
    assert.equal(await studio.page.locator('#compiler option[value=lualatex]').innerText(), 'lualatex (needs a bigger plan)');
    assert.deepEqual(studio.problems, []);

    // The first browser kept the old key: its dashboard notices and asks to sign in again.
    await page.goto(`${base}/dashboard`);
    await page.locator('#signin-key').waitFor();
    assert.equal(await page.locator('#panels').isHidden(), true);
    assert.deepEqual(fresh.problems, []);
    assert.deepEqual(
      problems.filter((p) => !/status of 401/.test(p)),
      [],
    );
  });

  it('uploads an asset in the dashboard and uses it in a studio compile; edits a template and saves it back', async () => {
    const user = await createAccount(services, 'starter');
    const { page, problems } = await open();
    page.on('dialog', (d) => void d.accept());
    await page.goto(`${base}/dashboard`);
    await page.getByRole('textbox', { name: 'API key', exact: true }).fill(user.key);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.locator('#panels').waitFor();
    assert.equal(await page.locator('#plan-badge').textContent(), 'starter plan');

    await page.getByLabel('File (png, jpg, pdf or svg)').setInputFiles({ name: 'Company Logo.png', mimeType: 'image/png', buffer: png(120, 40, [36, 81, 183]) });
    assert.equal(await page.getByLabel('Name used in LaTeX').inputValue(), 'Company-Logo.png');
    await page.getByLabel('Name used in LaTeX').fill('logo.png');
    await page.getByRole('button', { name: 'Upload' }).click();
    await page.getByRole('row', { name: /logo\.png/ }).waitFor();
    assert.match(await page.locator('#upload-status').innerText(), /Uploaded logo\.png/);
    assert.match(await page.locator('#meters').innerText(), /Stored assets\s*1 of 10/);

    // The studio (same browser, same key) finds the asset by name in the source.
    const source = String.raw`\documentclass{article}
\usepackage{graphicx}
\begin{document}
\includegraphics[width=8cm]{logo.png}
\end{document}
`;
    await typeInStudio(page, `${base}/studio`, source);
    await page.locator('#compile').click();
    await page.waitForFunction(() => /^Compiled|Not compiled|line/.test(document.querySelector('#status')?.textContent ?? ''));
    assert.match(await page.locator('#status').innerText(), /^Compiled 1 page/);
    const blue = await page.locator('canvas.pdf-page').evaluate((canvas: HTMLCanvasElement) => {
      const data = canvas.getContext('2d')!.getImageData(0, 0, canvas.width, canvas.height).data;
      let n = 0;
      for (let i = 0; i < data.length; i += 4) if (Math.abs(data[i]! - 36) < 12 && Math.abs(data[i + 1]! - 81) < 12 && Math.abs(data[i + 2]! - 183) < 12) n++;
      return n;
    });
    assert.ok(blue > 1000, `the logo is not on the page (${blue} blue pixels)`);

    // Save it as a template, open it from the dashboard, change it and save it back.
    await page.getByRole('button', { name: 'Save template' }).click();
    await page.getByLabel('Template name').fill('Letterhead');
    await page.getByRole('button', { name: 'Save', exact: true }).click();
    await page.waitForFunction(() => /Saved new template/.test(document.querySelector('#status')?.textContent ?? ''));
    await page.goto(`${base}/dashboard`);
    await page.getByRole('row', { name: /Letterhead/ }).waitFor();
    await page.screenshot({ path: join(SHOTS, 'dashboard.png'), fullPage: true });
    assert.deepEqual(await unlabelled(page), []);
    await page.getByRole('link', { name: 'Edit Letterhead in the studio' }).click();
    await page.waitForFunction(() => /includegraphics/.test(document.querySelector('.cm-content')?.textContent ?? ''));
    assert.match(await page.locator('#template-banner').innerText(), /Editing template Letterhead/);
    await page.locator('.cm-content').click();
    await page.keyboard.press('Control+End');
    await page.keyboard.insertText('% revised');
    await page.getByRole('button', { name: 'Save template' }).click();
    assert.equal(await page.getByLabel('Template name').inputValue(), 'Letterhead');
    await page.getByRole('button', { name: 'Save', exact: true }).click();
    await page.waitForFunction(() => /Saved template “Letterhead”/.test(document.querySelector('#status')?.textContent ?? ''));
    const saved = await fetch(`${base}/api/v1/templates/Letterhead`, { headers: user.headers });
    const body = (await saved.json()) as { template: { latex_content: string } };
    assert.match(body.template.latex_content, /% revised$/);
    assert.deepEqual(problems, []);
  });

  /** The JSON bodies the page posts to /api/v1/compile, in order. */
  function compileRequests(page: Page): Array<Record<string, unknown>> {
    const posted: Array<Record<string, unknown>> = [];
    page.on('request', (req) => {
      if (req.method() === 'POST' && new URL(req.url()).pathname === '/api/v1/compile') posted.push(req.postDataJSON() as Record<string, unknown>);
    });
    return posted;
  }

  /** A studio page that compiles with `key` (as if entered in "Use API key"). */
  async function studioWithKey(key: string, expected: string[] = []): Promise<Watched & { posted: Array<Record<string, unknown>> }> {
    const watched = await open(expected);
    await watched.page.addInitScript((k) => localStorage.setItem('quire.apiKey', k), key);
    return { ...watched, posted: compileRequests(watched.page) };
  }

  const compiled = (page: Page) => page.waitForFunction(() => /^(Compiled|Not |Output|The )/.test(document.querySelector('#status')?.textContent ?? ''));
  const outOf = (hash: string) => JSON.parse(inflateRawSync(Buffer.from(new URLSearchParams(hash.slice(1)).get('out')!, 'base64url')).toString('utf8')) as unknown;

  it('Output panel: PDF/A-1b with a title locks encryption; an encrypted PDF still renders; passwords are never stored', async () => {
    const user = await createAccount(services, 'starter');
    const { page, problems, posted } = await studioWithKey(user.key);
    await typeInStudio(page, `${base}/studio`, HELLO);

    await page.locator('#output-panel > summary').click();
    assert.deepEqual(await unlabelled(page), []);
    const owner = page.getByLabel('Owner password');
    const userPassword = page.getByLabel('Password to open (optional)');
    await userPassword.fill('typed-before-pdfa');
    await owner.fill('typed-before-pdfa-owner');
    await page.getByLabel('PDF standard').selectOption('a-1b');
    assert.equal(await owner.isDisabled(), true);
    assert.equal(await userPassword.isDisabled(), true);
    assert.equal(await page.getByLabel('Print').isDisabled(), true);
    assert.equal(await page.getByLabel('Text', { exact: true }).isDisabled(), true, 'the watermark is locked too');
    assert.equal(await owner.inputValue(), '', 'a locked password is cleared');
    assert.equal(await userPassword.inputValue(), '');
    assert.equal(await page.locator('#out-encrypt-hint').innerText(), 'PDF/A forbids encryption: set the PDF standard to None to encrypt.');
    await page.getByLabel('Title', { exact: true }).fill('Studio archive copy');
    assert.equal(await page.locator('#output-count').innerText(), '· 2 set');
    await page.screenshot({ path: join(SHOTS, 'studio-output-panel.png') });
    await page.locator('#compile').click();
    await compiled(page);
    assert.match(await page.locator('#status').innerText(), /^Compiled 1 page in [\d.]+ s\. Meets PDF\/A-1b\.$/);
    assert.equal(await page.locator('#output-panel').getAttribute('open'), null, 'a compile folds the panel away');
    assert.equal(posted.length, 1);
    assert.deepEqual(posted[0]!.output, { pdf_standard: 'a-1b', metadata: { title: 'Studio archive copy' } });
    assert.ok(await pageHasInk(page), 'the PDF/A page is blank');

    // The PDF behind the link is PDF/A-1b with the title.
    const pdf = await fetch(await page.locator('#open-pdf').getAttribute('href') as string);
    assert.equal(pdf.status, 200);
    assert.equal(pdf.headers.get('content-type'), 'application/pdf');
    const dir = mkdtempSync(join(tmpdir(), 'quire-studio-'));
    try {
      const file = join(dir, 'archive.pdf');
      writeFileSync(file, Buffer.from(await pdf.arrayBuffer()));
      assert.match(execFileSync('pdfinfo', [file], { encoding: 'utf8' }), /Title:\s+Studio archive copy/);
      assert.match(execFileSync('pdfinfo', ['-meta', file], { encoding: 'utf8' }), /pdfaid:part(>|=")1/);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
    // The link keeps the output options, and a reload restores them.
    assert.deepEqual(outOf(await page.evaluate(() => location.hash)), { pdf_standard: 'a-1b', metadata: { title: 'Studio archive copy' } });
    await page.reload();
    await page.locator('#output-panel > summary').click();
    assert.equal(await page.getByLabel('PDF standard').inputValue(), 'a-1b');
    assert.equal(await page.getByLabel('Title', { exact: true }).inputValue(), 'Studio archive copy');
    assert.equal(await page.getByLabel('Owner password').isDisabled(), true);

    // Encryption: an owner password is required, then the encrypted PDF renders with the user password.
    await page.getByLabel('PDF standard').selectOption('');
    assert.equal(await page.locator('#out-encrypt-hint').innerText(), 'AES-256. The passwords go only into the compile: the studio never keeps them.');
    assert.equal(await page.getByLabel('Owner password').isDisabled(), false);
    await page.getByLabel('Password to open (optional)').fill('open-sesame-42');
    await page.locator('#compile').click();
    assert.equal(await page.locator('#status').innerText(), 'Encryption needs an owner password as well (it lifts the restrictions).');
    assert.equal(await page.getByLabel('Owner password').getAttribute('aria-invalid'), 'true');
    assert.equal(await page.evaluate(() => document.activeElement?.id), 'out-owner-password');
    assert.equal(posted.length, 1, 'nothing was sent');
    assert.equal(await page.locator('#output-panel').getAttribute('open'), '', 'the panel stays open on the problem');
    await page.getByLabel('Owner password').fill('owner-secret-42');
    await page.getByLabel('Copy text').uncheck();
    await page.locator('#compile').click();
    await compiled(page);
    assert.match(await page.locator('#status').innerText(), /^Compiled 1 page/, problems.join('; '));
    assert.deepEqual(posted[1]!.output, {
      metadata: { title: 'Studio archive copy' },
      encrypt: { user_password: 'open-sesame-42', owner_password: 'owner-secret-42', permissions: { copy: false } },
    });
    assert.ok(await pageHasInk(page), 'the encrypted PDF did not render');
    const stored = await page.evaluate(() => JSON.stringify({ local: { ...localStorage }, session: { ...sessionStorage }, hash: location.hash, href: location.href }));
    for (const secret of ['open-sesame-42', 'owner-secret-42', 'typed-before-pdfa']) assert.ok(!stored.includes(secret), `${secret} is stored: ${stored}`);
    assert.deepEqual(outOf(await page.evaluate(() => location.hash)), { metadata: { title: 'Studio archive copy' } });
    assert.deepEqual(problems, []);
  });

  it('Output panel without the editor chunk: page 1 image, a watermark, refused fields and PDF/A reasons listed', async () => {
    const user = await createAccount(services, 'starter');
    const { page, problems, posted } = await studioWithKey(user.key, ['422 /api/v1/compile']);
    // The editor chunk never arrives: the plain textarea and the panel must do.
    await page.route('**/build/chunks/editor-*.js', (route) => route.fulfill({ contentType: 'text/javascript', body: 'await new Promise(() => {});\nexport {};' }));
    await page.goto(`${base}/studio`);
    await page.waitForFunction(() => /Starter plan/.test(document.querySelector('#quota')?.textContent ?? ''));
    await page.getByLabel('LaTeX source').fill(HELLO);
    await page.locator('#output-panel > summary').click();
    assert.equal(await page.getByLabel('Image resolution (dpi)').isDisabled(), true);
    await page.getByLabel('Return an image of page 1').check();
    await page.getByLabel('Image resolution (dpi)').fill('100');
    await page.getByLabel('Text', { exact: true }).fill('DRAFT');
    await page.getByLabel('Compress').check();
    await page.locator('#compile').click();
    await compiled(page);
    assert.match(await page.locator('#status').innerText(), /^Compiled 1 page/);
    assert.deepEqual(posted[0]!.output, { watermark: { text: 'DRAFT', opacity: 0.2, angle: 45 }, page_images: { pages: [1], dpi: 100 }, compress: true });
    const image = page.locator('#page-image img');
    await page.waitForFunction(() => {
      const img = document.querySelector<HTMLImageElement>('#page-image img');
      return Boolean(img?.complete && img.naturalWidth > 0);
    });
    assert.equal(await image.evaluate((img: HTMLImageElement) => img.naturalWidth), 827, 'A4 at 100 dpi');
    assert.equal(await image.getAttribute('alt'), 'Page 1 as a PNG rendered by the server');
    assert.match(await page.locator('#page-image figcaption').innerText(), /Page 1 image from the server \(PNG, 827 × 1170 px\)/);
    assert.equal(await page.locator('.cm-content').count(), 0, 'the editor chunk stayed away');
    await page.screenshot({ path: join(SHOTS, 'studio-page-image.png') });

    // A field the API refuses is listed by name (no TeX run).
    await page.locator('#output-panel > summary').click();
    await page.getByLabel('Language').fill('en_GB');
    await page.locator('#compile').click();
    await page.locator('#diagnosis').waitFor();
    assert.equal(await page.locator('#diagnosis').getAttribute('data-code'), 'validation_failed');
    assert.equal(await page.locator('#diagnosis-title').innerText(), 'Not compiled');
    assert.match(await page.locator('.diag-reasons li').first().innerText(), /^output\.metadata\.lang: /);
    await page.locator('#output-panel > summary').click();
    await page.getByLabel('Language').fill('');

    // PDF/A-1b of a page with transparency: the validator's reasons, as a list.
    await page.getByLabel('LaTeX source').fill(TRANSPARENT_DOC);
    await page.getByLabel('PDF standard').selectOption('a-1b');
    await page.locator('#compile').click();
    await page.waitForFunction(() => document.querySelector('#diagnosis')?.getAttribute('data-code') === 'pdf_standard_failed');
    assert.deepEqual(posted.at(-1)!.output, { pdf_standard: 'a-1b', page_images: { pages: [1], dpi: 100 }, compress: true });
    assert.equal(await page.locator('#diagnosis-title').innerText(), 'Not PDF/A-1b');
    assert.equal(await page.locator('.diag-summary').innerText(), 'The PDF compiled, but the check found:');
    const reasons = await page.locator('.diag-reasons li').allInnerTexts();
    assert.ok(reasons.some((r) => /PDFBox Preflight/.test(r)), reasons.join('\n'));
    assert.match(await page.locator('.diag-fix').innerText(), /^Fix: Embed every font/);
    await page.screenshot({ path: join(SHOTS, 'studio-pdfa-failed.png') });
    assert.deepEqual(await unlabelled(page), []);
    assert.deepEqual(problems, []);
  });

  it('Output panel: on error "continue" sends on_error and lists the TeX errors beside the warnings; "stop" gives the diagnosis', async () => {
    const user = await createAccount(services, 'starter');
    const { page, problems, posted } = await studioWithKey(user.key, ['422 /api/v1/compile']);
    await typeInStudio(page, `${base}/studio`, RECOVERABLE_DOC);
    const failed = () => page.waitForFunction(() => {
      const diagnosis = document.querySelector<HTMLElement>('#diagnosis');
      return diagnosis?.hidden === false && diagnosis.dataset.code === 'compilation_failed';
    });

    // The default is SPEC's: no on_error sent, the diagnosis, no list.
    await page.locator('#compile').click();
    await failed();
    assert.equal('on_error' in posted[0]!, false);
    assert.equal(await page.locator('#problems').isHidden(), true);

    await page.locator('#output-panel > summary').click();
    assert.equal(await page.getByLabel('Stop').isChecked(), true);
    await page.getByLabel('Continue').check();
    assert.equal(await page.locator('#output-count').innerText(), '· 1 set');
    assert.deepEqual(await unlabelled(page), []);
    await page.locator('#compile').click();
    await compiled(page);
    assert.match(await page.locator('#status').innerText(), /^Compiled 1 page in [\d.]+ s despite 1 TeX error\.$/, problems.join('; '));
    assert.equal(posted[1]!.on_error, 'continue');
    assert.equal(posted[1]!.output, undefined, 'on_error is not an output option');
    assert.ok(await pageHasInk(page), 'the PDF made despite the error did not render');
    assert.equal(await page.locator('#diagnosis').isHidden(), true);
    assert.equal(await page.locator('#problems').isHidden(), false);
    assert.equal(await page.locator('#problems-title').innerText(), 'Compiled despite 1 TeX error');
    const errors = await page.locator('#problem-errors li').allInnerTexts();
    assert.equal(errors.length, 1);
    assert.match(errors[0]!, /^Undefined control sequence\. \(main\.tex, line 4\)/);
    const warnings = await page.locator('#problem-warnings li').allInnerTexts();
    assert.equal(warnings.length, 1, warnings.join('\n'));
    assert.match(warnings[0]!, /nowhere[\s\S]*line 5\)[\s\S]*Fix: /);
    await page.screenshot({ path: join(SHOTS, 'studio-on-error.png') });
    await page.locator('#problem-errors').getByRole('button', { name: 'Go to line 4' }).click();
    assert.match(await page.locator('.cm-activeLine').innerText(), /\\undefinedmacro/);

    // Reset puts it back to stop: the same source is SPEC's 422 again, and the list goes.
    await page.locator('#output-panel > summary').click();
    await page.locator('#out-reset').click();
    assert.equal(await page.getByLabel('Stop').isChecked(), true);
    assert.equal(await page.locator('#output-count').innerText(), '');
    await page.locator('#compile').click();
    await failed();
    assert.equal('on_error' in posted[2]!, false);
    assert.equal(await page.locator('#problems').isHidden(), true);
    assert.deepEqual(problems, []);
  });

  it('Output panel: signs with a stored identity (reason, location) a tagged PDF/UA-2, and states the report', async () => {
    const user = await createAccount(services, 'starter');
    const ca = makeCa();
    const stored = await api('/api/v1/signing-identities', { name: 'studio-signer', p12_base64: p12(makeLeaf(ca, 'Studio Signer'), [ca], 'pw-studio'), password: 'pw-studio' }, user.key);
    assert.equal(stored.status, 201, JSON.stringify(stored.json));
    const { page, problems, posted } = await studioWithKey(user.key);
    await typeInStudio(page, `${base}/studio`, HELLO);
    await page.locator('#output-panel > summary').click();
    const identity = page.getByLabel('Signing identity');
    await page.waitForFunction(() => document.querySelectorAll('#out-sign-identity option').length === 2);
    assert.deepEqual(await identity.locator('option').allInnerTexts(), ["Don't sign", 'studio-signer']);
    assert.equal(await page.getByLabel('Reason').isDisabled(), true, 'no signature fields before an identity is chosen');
    await identity.selectOption('studio-signer');
    await page.getByLabel('Reason').fill('Approved');
    await page.getByLabel('Location').fill('Zürich');
    assert.equal(await page.getByLabel("Timestamp from the server's authority (PAdES B-T)").isDisabled(), false);
    assert.deepEqual(await unlabelled(page), []);

    // A signature and linearization do not go together: said before anything is sent.
    await page.getByLabel('Linearize (fast web view)').check();
    await page.locator('#compile').click();
    assert.equal(await page.locator('#status').innerText(), 'A signed PDF cannot also be linearized: untick Linearize or choose "Don\'t sign".');
    assert.equal(await identity.getAttribute('aria-invalid'), 'true');
    assert.equal(posted.length, 0);
    await page.getByLabel('Linearize (fast web view)').uncheck();

    await page.getByLabel('PDF standard').selectOption('ua-2');
    await page.getByLabel('Title', { exact: true }).fill('Signed and tagged');
    await page.getByLabel('Language').fill('en-GB');
    await page.screenshot({ path: join(SHOTS, 'studio-output-sign.png') });
    await page.locator('#compile').click();
    await compiled(page);
    assert.deepEqual(posted[0]!.output, {
      pdf_standard: 'ua-2',
      metadata: { title: 'Signed and tagged', lang: 'en-GB' },
      sign: { identity: 'studio-signer', reason: 'Approved', location: 'Zürich' },
    });
    assert.match(await page.locator('#status').innerText(), /^Compiled 1 page in [\d.]+ s\. PDF\/UA-2: all 13 checks passed\. Signed\.$/, problems.join('; '));
    const pdf = Buffer.from(await (await fetch(await page.locator('#open-pdf').getAttribute('href') as string)).arrayBuffer());
    const dir = mkdtempSync(join(tmpdir(), 'quire-studio-sign-'));
    try {
      writeFileSync(join(dir, 'signed.pdf'), pdf);
      const sig = execFileSync('pdfsig', ['-nocert', join(dir, 'signed.pdf')], { encoding: 'utf8' });
      assert.match(sig, /Signer Certificate Common Name: Studio Signer\n/);
      assert.match(sig, /Signature Validation: Signature is Valid\./);
      assert.match(execFileSync('pdfinfo', ['-meta', join(dir, 'signed.pdf')], { encoding: 'utf8' }), /<pdfuaid:part>2<\/pdfuaid:part>/);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
    // A link keeps the standard and metadata, never the signature.
    assert.deepEqual(outOf(await page.evaluate(() => location.hash)), { pdf_standard: 'ua-2', metadata: { title: 'Signed and tagged', lang: 'en-GB' } });

    // "Tagged PDF" without the UA claim sends output.tagged and leaves encryption open.
    await page.locator('#output-panel > summary').click();
    await identity.selectOption('');
    await page.getByLabel('PDF standard').selectOption('tagged');
    assert.equal(await page.getByLabel('Owner password').isDisabled(), false);
    await page.locator('#compile').click();
    await compiled(page);
    assert.deepEqual(posted[1]!.output, { tagged: true, metadata: { title: 'Signed and tagged', lang: 'en-GB' } });
    assert.match(await page.locator('#status').innerText(), /^Compiled 1 page in [\d.]+ s\. Tagging: all \d+ checks passed\.$/);
    assert.deepEqual(problems, []);
  });

  it('lays the studio out for a phone, and points an anonymous user who ran out to a key', async () => {
    const { page, problems } = await open(['429 /api/v1/compile'], { width: 390, height: 844 });
    await page.goto(`${base}/studio`);
    await page.locator('.cm-content').waitFor();
    const overflow = await page.evaluate(() => document.documentElement.scrollWidth - window.innerWidth);
    assert.ok(overflow <= 0, `page scrolls sideways by ${overflow}px`);
    await page.screenshot({ path: join(SHOTS, 'studio-phone.png') });
    assert.deepEqual(await unlabelled(page), []);
    await page.locator('#output-panel > summary').click();
    const panelOverflow = await page.evaluate(() => document.documentElement.scrollWidth - window.innerWidth);
    assert.ok(panelOverflow <= 0, `the open Output panel scrolls sideways by ${panelOverflow}px`);
    await page.screenshot({ path: join(SHOTS, 'studio-phone-output.png') });
    assert.deepEqual(await unlabelled(page), []);
    await page.keyboard.press('Escape');
    assert.equal(await page.locator('#output-panel').getAttribute('open'), null, 'Escape folds the panel');

    // Earlier tests share this IP's daily allowance: use what is left, then one more.
    const left = Number(/(\d) of 3 compiles left today/.exec(await page.locator('#quota').innerText())![1]);
    for (let i = 0; i < left; i++) {
      await page.locator('#compile').click();
      await page.waitForFunction((n) => new RegExp(`${n} of 3 compiles left`).test(document.querySelector('#quota')?.textContent ?? ''), left - i - 1);
    }
    await page.locator('#compile').click();
    await page.locator('#diagnosis').waitFor();
    assert.equal(await page.locator('#diagnosis').getAttribute('data-code'), 'anonymous_quota_exhausted');
    assert.equal(await page.getByRole('link', { name: 'Get an API key' }).getAttribute('href'), `${base}/signup`);
    assert.match(await page.locator('#quota').innerText(), /0 of 3 compiles left today/);
    assert.deepEqual(problems, []);
  });
});
