// The real-project corpus of issue #22 (test/fixtures/projects/real: CVs, letters, papers, a
// thesis, slides, a poster, an invoice, TikZ figures, from public repositories; corpus.json
// names each one's source and licence). Each project goes through the real HTTP route as a
// user would send it — main.tex as `latex`, text files as strings, figures and fonts as
// {"base64"} in `files`, the theses also as a project_zip — and must end as latexmk ended on
// the same files in the same TeX Live (expected.json, written by scripts/corpus-pages.sh):
// the same page count where latexmk made a PDF, compilation_failed where it did not.
// The expectations are per TeX Live year (expected-<year>.json): the file of the TeX Live the
// service runs is used (the success body's `texlive`, else the host's pdftex).
// Four test files run a quarter of the projects each (corpus.test.ts to corpus-4.test.ts), two
// at a time within a file: a whole TeX Live project takes up to a minute on a busy machine, a
// test file must end within the runner's ten minutes, and the suite runs files side by side.
import assert from 'node:assert/strict';
import { readFileSync, readdirSync } from 'node:fs';
import { join, relative } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { zipSync } from 'fflate';
import { formatOfName } from '../../src/assets/validate.js';
import { imageToolSync } from '../../src/tex/image/tools.js';
import { createAccount, testApp, type TestAccount, type TestApp } from '../helpers.js';
import { defaultImageRoot } from '../../src/tex/image/default.js';

const ROOT = join(import.meta.dirname, '..', 'fixtures', 'projects', 'real');

interface CorpusEntry { engine: string; kind: string }
type Expected = { texlive: string; pages: Record<string, number | null> };

/** The TeX Live year the service compiles with: QUIRE_TEXLIVE's first year, else the default image's pdftex, else the default image (2026). */
function texliveYear(): string {
  if (process.env.QUIRE_TEXLIVE) return process.env.QUIRE_TEXLIVE.split(',')[0]!.trim();
  try {
    return /TeX Live (\d{4})/.exec(imageToolSync(['pdftex', '--version'], defaultImageRoot()))?.[1] ?? '2026';
  } catch {
    return '2026';
  }
}
function filesOf(root: string, name: string): Map<string, Buffer> {
  const dir = join(root, name);
  const files = new Map<string, Buffer>();
  for (const entry of readdirSync(dir, { recursive: true, withFileTypes: true })) {
    if (entry.isFile()) files.set(relative(dir, join(entry.parentPath, entry.name)), readFileSync(join(entry.parentPath, entry.name)));
  }
  return files;
}

function request(root: string, engine: string, name: string): { latex: string; compiler: string; files: Record<string, string | { base64: string }> } {
  const files: Record<string, string | { base64: string }> = {};
  let latex = '';
  for (const [path, data] of filesOf(root, name)) {
    if (path === 'main.tex') latex = data.toString('utf8');
    // Sent whole, as a client walking the folder would: a build file without an extension
    // (ustcthesis's latexmkrc) is skipped by the service, in `files` as in project_zip. A
    // binary of no asset type (a .pptx) has no form in `files`; project_zip skips it too.
    else if (formatOfName(path)) files[path] = { base64: data.toString('base64') };
    else if (!data.includes(0)) files[path] = data.toString('utf8');
  }
  return { latex, compiler: engine, files };
}

export interface CorpusOptions {
  /** The corpus folder (corpus.json, expected-<year>.json, one folder a project); the suite's own by default. */
  root?: string;
  /** How many test files share the corpus (projects go round-robin by their order in corpus.json); 4 by default. */
  shards?: number;
  /** Projects also sent as a project_zip (by their folder of chapters and figures), each in the shard of its index in this list. */
  zipped?: string[];
  /** Fewest projects the corpus may hold (a folder emptied by mistake fails); issue #39's 60 by default. */
  atLeast?: number;
}

/** Registers the tests of shard `shard` (0 to shards - 1) of a corpus. */
export function realProjects(shard: number, options: CorpusOptions = {}): void {
  const root = options.root ?? ROOT;
  const shards = options.shards ?? 4;
  const zipped = options.zipped ?? ['cleanthesis', 'ustcthesis', 'classicthesis'];
  const corpus = JSON.parse(readFileSync(join(root, 'corpus.json'), 'utf8')) as Record<string, CorpusEntry>;
  const expected = JSON.parse(readFileSync(join(root, `expected-${texliveYear()}.json`), 'utf8')) as Expected;
  describe(`real-project corpus ${root === ROOT ? '' : `${root} `}against latexmk (TeX Live ${expected.texlive}), part ${shard + 1} of ${shards}`, { concurrency: 2 }, () => {
    let t: TestApp;
    let account: TestAccount;
    before(async () => {
      // The service serves (and so runs) the year whose expectations these are.
      t = await testApp({ env: { QUIRE_TEXLIVE: expected.texlive } });
      account = await createAccount(t.services, 'business');
    });
    after(() => t.close());

    const compile = (payload: object) => t.app.inject({ method: 'POST', url: '/api/v1/compile', payload, headers: account.headers });

    if (shard === 0) {
      test('every project in corpus.json has an expectation and a folder', () => {
        assert.deepEqual(Object.keys(expected.pages).sort(), Object.keys(corpus).sort());
        assert.ok(Object.keys(corpus).length >= (options.atLeast ?? 60));
      });
    }

    for (const name of Object.keys(corpus).filter((_, i) => i % shards === shard)) {
      const pages = expected.pages[name];
      test(`${name} (${corpus[name]!.kind}, ${corpus[name]!.engine}): ${pages === null || pages === undefined ? 'fails as under latexmk' : `${pages} pages as under latexmk`}`, async () => {
        const res = await compile(request(root, corpus[name]!.engine, name));
        if (pages === null || pages === undefined) {
          assert.equal(res.statusCode, 422, res.body.slice(0, 2000));
          assert.equal(res.json().error, 'compilation_failed');
        } else {
          assert.equal(res.statusCode, 200, res.body.slice(0, 4000));
          assert.equal(res.json().pages, pages);
          assert.equal(res.json().texlive, expected.texlive);
        }
      });
    }

    // Theses (folders of chapters and figures); ustcthesis also carries a latexmkrc, which the zip path skips.
    for (const name of zipped.filter((_, i) => i % shards === shard)) {
      test(`${name} as a project_zip gives the same result as its files`, async () => {
        const zip = zipSync(Object.fromEntries([...filesOf(root, name)].map(([path, data]) => [`thesis-main/${path}`, new Uint8Array(data)])));
        const res = await compile({ project_zip: Buffer.from(zip).toString('base64'), compiler: corpus[name]!.engine });
        const pages = expected.pages[name];
        if (pages === null || pages === undefined) assert.equal(res.json().error, 'compilation_failed');
        else {
          assert.equal(res.statusCode, 200, res.body.slice(0, 4000));
          assert.equal(res.json().pages, pages);
          assert.equal(res.json().texlive, expected.texlive);
        }
      });
    }
  });
}
