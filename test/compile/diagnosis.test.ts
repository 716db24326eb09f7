// The compile service hands a failed compile's log and source to the diagnosis, and treats
// glyphs that xelatex/lualatex silently dropped as a failure the caller can fix.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { createAccount, testApp, type TestAccount, type TestApp } from '../helpers.js';

describe('compile failures carry the diagnosis', () => {
  let t: TestApp;
  let account: TestAccount;
  before(async () => {
    t = await testApp();
    account = await createAccount(t.services, 'starter');
  });
  after(() => t.close());

  const compile = (payload: object) => t.app.inject({ method: 'POST', url: '/api/v1/compile', payload, headers: account.headers });

  test('a missing glyph under xelatex is a missing_glyph warning on the delivered PDF, at its line, naming a font that has it', async () => {
    const latex = '\\documentclass{article}\n\\begin{document}\nDone \u2713 here.\n\\end{document}\n';
    const res = await compile({ latex, compiler: 'xelatex' });
    assert.equal(res.statusCode, 200, res.body);
    const [warning] = res.json().warnings;
    assert.equal(warning.type, 'missing_glyph');
    assert.equal(warning.symbol, 'U+2713');
    assert.equal(warning.line, 3);
    assert.match(warning.fix, /\\newfontfamily|remove/);
  });

  test('an undefined command names its package and the line of the source', async () => {
    const latex = '\\documentclass{article}\n\\begin{document}\n\\textcolor{red}{Hi}\n\\end{document}\n';
    const body = (await compile({ latex })).json();
    assert.equal(body.error, 'compilation_failed');
    assert.equal(body.line, 3);
    assert.equal(body.diagnosis.error_class, 'undefined_command');
    assert.equal(body.diagnosis.symbol, '\\textcolor');
    assert.equal(body.diagnosis.suggested_package, 'xcolor');
    assert.equal(body.diagnosis.confidence, 'certain');
    assert.match(body.agent_hint, /xcolor/);
  });

  test('a command only the TeX Live index knows is confirmed by a probe compile before it is suggested', async () => {
    // \dddot: amsmath, mathdots, accents and amstex define it; the probe picks the first that works.
    const latex = '\\documentclass{article}\n\\begin{document}\nA jerk: $\\dddot{x}$.\n\\end{document}\n';
    const body = (await compile({ latex })).json();
    assert.equal(body.error, 'compilation_failed');
    assert.equal(body.diagnosis.error_class, 'undefined_command');
    assert.equal(body.diagnosis.symbol, '\\dddot');
    assert.equal(body.diagnosis.suggested_package, 'amsmath');
    assert.equal(body.diagnosis.confidence, 'verified');
    assert.equal(body.diagnosis.line, 3);
    assert.equal('verify' in body, false);
    assert.deepEqual(Object.keys(body.diagnosis).sort(), ['confidence', 'error_class', 'line', 'retryable', 'suggested_fix', 'suggested_package', 'summary', 'symbol']);
  });

  test('issue 39: an undefined command in an \\input file of the project is diagnosed in that file, and its probe compiles with the files', async () => {
    const latex = '\\documentclass{article}\n\\begin{document}\n\\input{chapters/one}\n\\end{document}\n';
    const body = (await compile({ latex, files: { 'chapters/one.tex': 'Intro.\n\nA jerk: $\\dddot{x}$.\n' } })).json();
    assert.equal(body.error, 'compilation_failed');
    assert.deepEqual([body.diagnosis.error_class, body.diagnosis.symbol, body.diagnosis.suggested_package, body.diagnosis.confidence], ['undefined_command', '\\dddot', 'amsmath', 'verified']);
    assert.equal(body.diagnosis.summary, 'The command \\dddot on line 3 of chapters/one.tex is not defined. It is provided by the package amsmath, which the document does not load.');
    assert.equal(body.diagnosis.line, undefined);
  });

  test('a command in the generated bibliography names its package (\\url from plainurl.bst)', async () => {
    const latex =
      '\\documentclass{article}\n\\begin{filecontents*}[overwrite]{refs.bib}\n@book{k, author={Ann Author}, title={A Title}, publisher={P}, year={2020}, url={https://example.org/x}}\n\\end{filecontents*}\n\\begin{document}\nSee \\cite{k}.\n\\bibliographystyle{plainurl}\n\\bibliography{refs}\n\\end{document}\n';
    const res = await compile({ latex });
    assert.equal(res.statusCode, 422);
    const body = res.json();
    assert.equal(body.diagnosis.error_class, 'undefined_command');
    assert.equal(body.diagnosis.symbol, '\\url');
    assert.equal(body.diagnosis.suggested_package, 'url');
    assert.equal(body.diagnosis.confidence, 'certain');
  });

  test('OpenAPI and the MCP compile tool show the diagnosis schema with confidence', async () => {
    const doc = (await t.app.inject({ url: '/openapi.json' })).json();
    const failure = doc.paths['/api/v1/compile'].post.responses['422'].content['application/json'].schema;
    assert.deepEqual(failure.properties.diagnosis.properties.confidence.anyOf.map((s: { const?: string; enum?: string[] }) => s.const ?? s.enum?.[0]), ['certain', 'verified', 'unverified']);
    const list = await t.app.inject({ method: 'POST', url: '/mcp', headers: { ...account.headers, 'content-type': 'application/json' }, payload: { jsonrpc: '2.0', id: 1, method: 'tools/list' } });
    const tool = list.json().result.tools.find((x: { name: string }) => x.name === 'compile');
    const error = tool.outputSchema.anyOf.find((s: { properties?: { diagnosis?: unknown } }) => s.properties?.diagnosis);
    assert.deepEqual(error.properties.diagnosis.properties.confidence.anyOf.map((s: { const?: string; enum?: string[] }) => s.const ?? s.enum?.[0]), ['certain', 'verified', 'unverified']);
  });

  test('an unclassifiable failure has no diagnosis but still a log and a line', async () => {
    const latex = '\\documentclass{article}\n\\begin{document}\n\\errmessage{custom stop}\n\\end{document}\n';
    const body = (await compile({ latex })).json();
    assert.equal(body.error, 'compilation_failed');
    assert.equal(body.diagnosis, undefined);
    assert.equal(body.line, 3);
    assert.match(body.log, /custom stop/);
  });
});

describe('a caller whose probe budget is spent', () => {
  let t: TestApp;
  let account: TestAccount;
  before(async () => {
    t = await testApp({ env: { QUIRE_PROBES_PER_MINUTE: '0' } });
    account = await createAccount(t.services, 'starter');
  });
  after(() => t.close());

  test('still gets the best-ranked package, marked unverified', async () => {
    const latex = '\\documentclass{article}\n\\begin{document}\nA jerk: $\\dddot{x}$.\n\\end{document}\n';
    const res = await t.app.inject({ method: 'POST', url: '/api/v1/compile', payload: { latex }, headers: account.headers });
    assert.equal(res.statusCode, 422);
    const body = res.json();
    assert.equal(body.diagnosis.symbol, '\\dddot');
    assert.equal(body.diagnosis.suggested_package, 'amsmath');
    assert.equal(body.diagnosis.confidence, 'unverified');
    assert.match(body.diagnosis.suggested_fix, /\\usepackage\{amsmath\}/);
  });
});
