// Every gallery template rendered as a tagged PDF/UA-2 (issue 40) through the public render
// route with its sample data: each must be delivered, and every check of the service's own
// conformance report must pass, except the ones listed in EXCEPTIONS (each named with the
// package that blocks it, as docs/pdf-output.md lists them). The untagged renderings are
// templates.test.ts's. Two renders at a time (the TeX queue's width here).
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { loadCatalog } from '../../src/gallery/catalog.js';
import { createAccount, testApp, type TestAccount, type TestApp } from '../helpers.js';
import { capturedLog } from '../security/attack.js';

interface Report {
  standards: string[];
  checks: Array<{ id: string; passed: boolean; detail: string }>;
  violations: string[];
}

/** The checks a PDF/UA-2 report carries (tex/output/conformance.ts), in its order. */
const UA_CHECKS = [
  'structure_tree_root', 'mark_info_marked', 'figures_alt', 'heading_levels', 'tables_header_cells', 'pages_struct_parents',
  'annotations_tab_order', 'lang', 'display_doc_title', 'xmp_dc_title', 'xmp_pdfuaid', 'fonts_embedded', 'fonts_unicode',
];

/**
 * Templates that may fail a check, with the check and the package that blocks it. Kept equal to
 * the table in docs/pdf-output.md ("The gallery's templates with ua-2").
 */
const EXCEPTIONS: Record<string, { check: string; blocking: string }> = {};

describe('gallery templates as tagged PDF/UA-2', () => {
  const catalog = loadCatalog();
  let t: TestApp;
  let owner: TestAccount;
  // The service's error lines, to say why a render was not delivered.
  const { log, lines } = capturedLog();

  before(async () => {
    t = await testApp({ log, env: { QUIRE_COMPILE_CONCURRENCY: '2' } });
    // Business: the longest compile timeout (a tagged pdflatex pass is several seconds here).
    owner = await createAccount(t.services, 'business');
  });
  after(() => t.close());

  test('all twenty render with ua-2, lang and title, and pass every check (or fail only their documented exception)', async () => {
    assert.equal(catalog.length, 20);
    for (const slug of Object.keys(EXCEPTIONS)) assert.ok(catalog.some((c) => c.slug === slug), `exception for an unknown template ${slug}`);
    const failed: Record<string, string[]> = {};
    const problems: string[] = [];
    let next = 0;
    await Promise.all(
      [0, 1].map(async () => {
        while (next < catalog.length) {
          const template = catalog[next++]!;
          const res = await t.app.inject({
            method: 'POST',
            url: `/api/v1/public_templates/${template.slug}/render`,
            headers: owner.headers,
            payload: { data: template.sample_data, output: { pdf_standard: 'ua-2', metadata: { lang: 'en-GB', title: template.title } } },
          });
          if (res.statusCode !== 200) {
            const logged = lines.filter((l) => /"level":50/.test(l)).at(-1) ?? '';
            problems.push(`${template.slug}: ${res.statusCode} ${res.body.slice(0, 300)} ${logged.slice(0, 600)}`);
            continue;
          }
          const report = res.json<{ conformance: Report }>().conformance;
          if (JSON.stringify(report.checks.map((c) => c.id)) !== JSON.stringify(UA_CHECKS)) problems.push(`${template.slug}: checks ${report.checks.map((c) => c.id).join(',')}`);
          if (JSON.stringify(report.standards) !== '["ua-2"]') problems.push(`${template.slug}: standards ${JSON.stringify(report.standards)}`);
          const ids = report.checks.filter((c) => !c.passed).map((c) => c.id);
          if (ids.length > 0) failed[template.slug] = report.violations;
        }
      }),
    );
    assert.deepEqual(problems, []);
    const failedChecks = Object.fromEntries(Object.entries(failed).map(([slug, violations]) => [slug, violations.map((v) => v.split(':')[0])]));
    assert.deepEqual(failedChecks, Object.fromEntries(Object.entries(EXCEPTIONS).map(([slug, e]) => [slug, [e.check]])), JSON.stringify(failed, null, 1));
  });
});
