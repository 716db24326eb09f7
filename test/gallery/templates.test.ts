// Every gallery template, typeset for real: its sample data in every color, hostile data
// (every LaTeX special character, 2,000-character strings, 60 line items) and data with
// only the required fields. Jobs go through the service's TeX runner, two at a time.
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { after, before, describe, test } from 'node:test';
import { loadCatalog, type GalleryTemplate } from '../../src/gallery/catalog.js';
import { dropBlankOptionals, validateGalleryData } from '../../src/gallery/validate.js';
import { testServices, type TestServices } from '../helpers.js';
import { shaped, TOKENS } from './hostile.js';

const run = promisify(execFile);

/**
 * Runs `task` over `items` at most `limit` at a time (the runner's queue is bounded) and
 * fails with every failure listed, not just the first.
 */
async function pool<T>(items: T[], limit: number, task: (item: T) => Promise<void>): Promise<void> {
  let next = 0;
  const failures: string[] = [];
  await Promise.all(
    Array.from({ length: limit }, async () => {
      while (next < items.length) {
        const item = items[next++]!;
        await task(item).catch((err: Error) => failures.push(err.message.split('\n')[0]!));
      }
    }),
  );
  assert.deepEqual(failures, []);
}
const catalog = loadCatalog();

async function pdfText(pdf: Buffer): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), 'quire-gallery-text-'));
  try {
    await writeFile(join(dir, 'doc.pdf'), pdf);
    const { stdout } = await run('pdftotext', ['-raw', join(dir, 'doc.pdf'), '-'], { maxBuffer: 64 * 1024 * 1024 });
    return stdout;
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

describe('gallery templates typeset', () => {
  let services: TestServices;
  before(async () => {
    services = await testServices({ env: { QUIRE_COMPILE_CONCURRENCY: '2' } });
  });
  after(() => services.cleanup());

  async function typeset(t: GalleryTemplate, raw: Record<string, unknown>, color: string) {
    // What the render route does before filling: blank optional strings mean "absent".
    const data = dropBlankOptionals(t.schema, raw) as Record<string, unknown>;
    const problems = validateGalleryData(t.schema, data);
    assert.equal(problems, null, `${t.slug}: data valid (${JSON.stringify(problems)})`);
    const { latex } = await services.gallery.fill(t, data, color);
    const result = await services.texQueue.run({ source: latex, compiler: t.compiler, timeoutMs: 120_000, maxFileBytes: 100 * 1024 * 1024 });
    assert.equal(result.outcome, 'ok', `${t.slug} in ${color}: ${result.log.split('\n').filter((l) => l.startsWith('!') || /:\d+:/.test(l)).slice(0, 5).join(' | ')}`);
    return { pdf: result.pdf!, pages: result.pages!, latex, log: result.log };
  }

  test('every schema rejects its sample data without a required field, and accepts it whole', () => {
    for (const t of catalog) {
      assert.equal(validateGalleryData(t.schema, t.sample_data), null, `${t.slug} sample is valid`);
      for (const field of t.schema.required as string[]) {
        const copy = structuredClone(t.sample_data);
        delete copy[field];
        assert.deepEqual(validateGalleryData(t.schema, copy)?.missing_fields, [field], `${t.slug} without ${field}`);
      }
    }
  });

  test('every template renders its sample data in every color within the anonymous limits', async () => {
    const jobs = catalog.flatMap((t) => t.colors.map((color) => ({ t, color })));
    assert.ok(jobs.length >= 60);
    await pool(jobs, 2, async ({ t, color }) => {
        const { pdf, pages, latex } = await typeset(t, t.sample_data, color);
        assert.ok(pages <= 3, `${t.slug} fits the anonymous three pages (${pages})`);
        assert.ok(Buffer.byteLength(latex) <= 30 * 1024, `${t.slug} source fits the anonymous 30 KB`);
        assert.match(latex, new RegExp(`\\\\definecolor\\{accent\\}\\{HTML\\}\\{${t.palette[color]}\\}`));
        if (color === t.default_color) {
          const text = (await pdfText(pdf)).replace(/\s+/g, ' ');
          const first = String(Object.values(t.sample_data).find((v) => typeof v === 'string' && !/^\d{4}-\d\d-\d\d$/.test(v)));
          assert.ok(text.includes(first.slice(0, 12)), `${t.slug} shows "${first.slice(0, 12)}"`);
        }
    });
  });

  test('hostile data: special characters, 2,000-character strings and 60 line items', async () => {
    await pool(catalog, 2, async (t) => {
        const data = shaped(t.schema, t.sample_data, t.schema, false) as Record<string, unknown>;
        const { pdf, pages, log } = await typeset(t, data, t.colors[1]!);
        assert.ok(pages >= 1);
        // Nothing pushed off a page: no box taller than the page, none wider by more than a hair.
        assert.doesNotMatch(log, /Overfull \\vbox/, `${t.slug}: a block taller than the page`);
        assert.doesNotMatch(log, /Overfull \\hbox \((?:[1-9]\d+|[5-9])\.\d+pt too wide/, `${t.slug}: text off the page edge`);
        const text = (await pdfText(pdf)).replace(/\s+/g, ' ');
        for (const token of TOKENS) assert.ok(text.includes(token), `${t.slug} prints ${token} literally`);
        assert.ok(text.includes('Zürich naïve façade'), `${t.slug} keeps accented letters`);
    });
  });

  test('only the required fields, optional ones empty or absent', async () => {
    await pool(catalog, 2, async (t) => {
        const data = shaped(t.schema, t.sample_data, t.schema, true) as Record<string, unknown>;
        const { pages } = await typeset(t, data, t.colors[2]!);
        assert.ok(pages >= 1);
    });
  });
});
