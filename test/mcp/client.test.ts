// The official MCP SDK client against a real listening Quire over Streamable HTTP: initialize,
// tool lists with and without a key and with ?extensions=1, and every tool called successfully
// and with a failure.
import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import { after, before, describe, test } from 'node:test';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { createAccount, DB_KINDS, HELLO, testApp, type TestAccount, type TestApp } from '../helpers.js';

type Result = Awaited<ReturnType<Client['callTool']>>;
type Body = Record<string, unknown>;

// Both databases: the SDK client checks every structuredContent against the tool's outputSchema,
// so this also proves the bodies (ids, timestamps) have the advertised shape on each.
for (const db of DB_KINDS) {
  describe(`MCP over Streamable HTTP with the SDK client on ${db}`, () => {
    let t: TestApp;
    let url: URL;
    let pro: TestAccount;
    let free: TestAccount;
    const clients: Client[] = [];

    async function connect(headers: Record<string, string> = {}, query = ''): Promise<Client> {
      const client = new Client({ name: 'quire-test', version: '1.0.0' });
      await client.connect(new StreamableHTTPClientTransport(new URL(query, url), { requestInit: { headers } }));
      clients.push(client);
      return client;
    }

    async function call(client: Client, name: string, args: Body = {}): Promise<Result> {
      // listTools caches output schemas, so callTool checks structuredContent against them.
      await client.listTools();
      return client.callTool({ name, arguments: args });
    }

    function ok(result: Result): Body {
      assert.equal(result.isError, undefined, JSON.stringify(result.content));
      const [text] = result.content as Array<{ type: string; text: string }>;
      assert.equal(text!.type, 'text');
      return result.structuredContent as Body;
    }

    function failed(result: Result, code: string): Body {
      assert.equal(result.isError, true);
      const body = result.structuredContent as Body;
      assert.equal(body.error, code, JSON.stringify(body));
      const [text] = result.content as Array<{ type: string; text: string }>;
      assert.match(text!.text, new RegExp(code));
      return body;
    }

    let anonymous: Client;
    let keyed: Client;

    before(async () => {
      t = await testApp({ db });
      await t.app.listen({ host: '127.0.0.1', port: 0 });
      const address = t.app.server.address();
      assert.ok(address && typeof address === 'object');
      url = new URL(`http://127.0.0.1:${address.port}/mcp`);
      pro = await createAccount(t.services, 'pro');
      free = await createAccount(t.services, 'free');
      anonymous = await connect();
      keyed = await connect(pro.headers);
    });
    after(async () => {
      for (const client of clients) await client.close();
      await t.close();
    });

    test('initialize negotiates the newest revision and reports the server', () => {
      assert.deepEqual(keyed.getServerVersion(), { name: 'quire', title: 'Quire', version: '1.5.0' });
      const capabilities = keyed.getServerCapabilities();
      assert.ok(capabilities?.tools && capabilities.resources && capabilities.prompts);
      assert.match(keyed.getInstructions() ?? '', /compile/);
    });

    test("tools: SPEC's four without a key, its fourteen and get_job with one (valid or not); the extensions with ?extensions=1, callable either way", async () => {
      const names = async (client: Client) => (await client.listTools()).tools.map((tool) => tool.name).sort();
      const publicTools = ['compile', 'get_public_template', 'list_public_templates', 'render_public_template'];
      assert.deepEqual(await names(anonymous), publicTools);
      const keyedTools = [
        ...publicTools, 'delete_asset', 'delete_template', 'get_asset', 'get_job', 'get_template', 'list_assets', 'list_templates', 'render', 'save_asset', 'save_template', 'usage',
      ].sort();
      assert.deepEqual(await names(keyed), keyedTools);
      const invalid = await connect({ authorization: 'Bearer qk_not_a_real_key' });
      assert.deepEqual(await names(invalid), keyedTools);
      assert.deepEqual(await names(await connect({}, '?extensions=1')), [...publicTools, 'validate', 'check_pdf'].sort());
      const extended = await names(await connect(pro.headers, '?extensions=1'));
      assert.equal(extended.length, 21);
      assert.deepEqual(extended, [...keyedTools, 'check_pdf', 'delete_signing_identity', 'list_signing_identities', 'list_template_versions', 'restore_template_version', 'validate'].sort());
      // An extension tool not listed to this client still runs for it.
      const findings = ok(await call(anonymous, 'validate', { latex: HELLO })).findings;
      assert.ok(Array.isArray(findings));
      failed(await call(keyed, 'list_template_versions', { id: 'nope' }), 'template_not_found');
    });

    test('usage: the HTTP body; a bad key and a missing key are tool errors', async () => {
      const body = ok(await call(keyed, 'usage'));
      assert.deepEqual((body.user as Body).plan, 'pro');
      const http = await t.app.inject({ url: '/api/v1/usage', headers: pro.headers });
      assert.deepEqual(body, http.json());
      const invalid = await connect({ authorization: 'Bearer qk_not_a_real_key' });
      failed(await call(invalid, 'usage'), 'invalid_api_key');
      failed(await call(anonymous, 'usage'), 'missing_api_key');
    });

    test('compile: a PDF link anonymously; a failure carries the diagnosis', async () => {
      const body = ok(await call(anonymous, 'compile', { latex: HELLO }));
      assert.equal(body.pages, 1);
      assert.equal(body.anonymous, true);
      assert.equal(body.remaining_today, 2);
      // The same anonymous tier as HTTP, counted by client IP.
      const http = await t.app.inject({ method: 'POST', url: '/api/v1/compile', payload: { latex: HELLO } });
      assert.equal(http.json().remaining_today, 1);
      const pdf = await fetch(String(body.pdf_url).replace('http://quire.test', url.origin));
      assert.equal(pdf.status, 200);
      assert.equal((await pdf.arrayBuffer()).byteLength > 500, true);

      const broken = HELLO.replace('Hello, Quire.', '\\textcolor{red}{Hello}');
      const result = await call(keyed, 'compile', { latex: broken });
      const error = failed(result, 'compilation_failed');
      assert.equal(typeof error.log, 'string');
      const [text] = result.content as Array<{ text: string }>;
      assert.match(text!.text, /line 3/);
      failed(await call(await connect(free.headers), 'compile', { latex: HELLO, compiler: 'lualatex' }), 'compiler_not_available');
    });

    test('assets: save, list, get, use in a compile, delete; and their failures', async () => {
      const png = (await readFile(new URL('../fixtures/assets/logo.png', import.meta.url))).toString('base64');
      const saved = ok(await call(keyed, 'save_asset', { name: 'logo.png', content_base64: png }));
      assert.equal(saved.created, true);
      assert.equal((saved.asset as Body).name, 'logo.png');

      const list = ok(await call(keyed, 'list_assets'));
      assert.equal(list.count, 1);
      assert.deepEqual((list.assets as Body[]).map((a) => a.name), ['logo.png']);

      const got = await call(keyed, 'get_asset', { id_or_name: 'LOGO.png' });
      assert.equal((ok(got).asset as Body).content_base64, png);
      const image = (got.content as Array<{ type: string; data?: string; mimeType?: string }>)[1];
      assert.deepEqual(image, { type: 'image', data: png, mimeType: 'image/png' });
      // A number works as an id, as list_assets reports them.
      const byId = ok(await call(keyed, 'get_asset', { id_or_name: (saved.asset as Body).id as number }));
      assert.equal((byId.asset as Body).name, 'logo.png');

      const latex = HELLO.replace('\\begin{document}', '\\usepackage{graphicx}\n\\begin{document}\n\\includegraphics[width=2cm]{logo.png}');
      const compiled = ok(await call(keyed, 'compile', { latex, use_stored_assets: ['logo.png'] }));
      assert.deepEqual(compiled.stored_assets_used, ['logo.png']);

      const deleted = ok(await call(keyed, 'delete_asset', { id_or_name: 'logo.png' }));
      assert.deepEqual(deleted, { deleted: true, id_or_name: 'logo.png' });
      failed(await call(keyed, 'get_asset', { id_or_name: 'logo.png' }), 'not_found');
      failed(await call(keyed, 'delete_asset', { id_or_name: 'logo.png' }), 'not_found');
      failed(await call(keyed, 'save_asset', { name: '../logo.png', content_base64: png }), 'invalid_asset_filename');
      failed(await call(keyed, 'compile', { latex, use_stored_assets: ['logo.png'] }), 'asset_not_found');
      const missing = failed(await call(keyed, 'save_asset', { name: 'x.png' }), 'validation_failed');
      assert.deepEqual((missing.fields as Body[]).map((f) => [f.field, f.rule]), [['content_base64', 'required']]);
      const freeClient = await connect(free.headers);
      failed(await call(freeClient, 'list_assets'), 'plan_required');
      failed(await call(anonymous, 'save_asset', { name: 'logo.png', content_base64: png }), 'missing_api_key');
    });

    test('templates: save, list, get (with instructions), render, delete; and their failures', async () => {
      const created = ok(
        await call(keyed, 'save_template', {
          name: 'letter',
          latex_content: HELLO,
          description: 'A short letter',
          instructions: 'Replace the greeting with the recipient.',
        }),
      );
      assert.equal(created.created, true);
      const updated = ok(await call(keyed, 'save_template', { name: 'Letter', description: 'A letter' }));
      assert.equal(updated.created, false);

      const card = ok(
        await call(keyed, 'save_template', {
          name: 'card',
          latex_content: '\\documentclass{article}\n\\begin{document}\nDear {{ name }},\n\\end{document}\n',
          placeholder_engine: 'liquid',
        }),
      );
      assert.equal((card.template as Body).placeholder_engine, 'liquid');

      const list = ok(await call(keyed, 'list_templates'));
      const rows = list.templates as Body[];
      assert.deepEqual(rows.map((r) => [r.name, r.has_instructions]), [['card', false], ['letter', true]]);
      assert.equal('latex_content' in rows[0]!, false);

      const letter = ok(await call(keyed, 'get_template', { id: 'letter' }));
      assert.equal((letter.template as Body).instructions, 'Replace the greeting with the recipient.');
      assert.equal((letter.template as Body).latex_content, HELLO);
      const withSchema = ok(await call(keyed, 'get_template', { id: (card.template as Body).id as number }));
      assert.ok(withSchema.schema && withSchema.sample_data);

      const rendered = await call(keyed, 'render', { id: 'card', data: { name: 'Ada & Co' } });
      const body = ok(rendered);
      assert.equal(body.pages, 1);
      assert.deepEqual(body.template, { id: (card.template as Body).id, name: 'card', version: 1 });
      assert.match((rendered.content as Array<{ text: string }>)[0]!.text, /PDF ready: http/);

      const invalid = failed(await call(keyed, 'render', { id: 'card', data: {} }), 'schema_validation_failed');
      assert.deepEqual(invalid.missing_fields, ['name']);
      failed(await call(keyed, 'render', { id: 'letter', data: {} }), 'template_engine_mismatch');
      failed(
        await call(keyed, 'save_template', { name: 'bad', latex_content: '\\documentclass{article}{{ x }}' }),
        'liquid_placeholders_in_v1_template',
      );
      const tooLong = failed(await call(keyed, 'save_template', { name: 'n'.repeat(101), latex_content: HELLO }), 'validation_failed');
      assert.deepEqual((tooLong.fields as Body[]).map((f) => [f.field, f.rule, f.limit]), [['name', 'maxLength', 100]]);

      assert.deepEqual(ok(await call(keyed, 'delete_template', { id: 'letter' })), { deleted: true, id: 'letter' });
      failed(await call(keyed, 'get_template', { id: 'letter' }), 'template_not_found');
      failed(await call(keyed, 'delete_template', { id: 'letter' }), 'template_not_found');
      failed(await call(await connect(free.headers), 'list_templates'), 'plan_required');
    });

    test('public gallery: list, get, render anonymously; and their failures', async () => {
      const list = ok(await call(anonymous, 'list_public_templates'));
      const entries = list.templates as Body[];
      assert.ok(entries.length >= 2);
      const http = await t.app.inject({ url: '/api/v1/public_templates' });
      assert.deepEqual(list, http.json());

      const slug = String(entries[0]!.slug);
      const detail = ok(await call(anonymous, 'get_public_template', { slug }));
      assert.deepEqual(detail, (await t.app.inject({ url: `/api/v1/public_templates/${slug}` })).json());
      const colors = detail.colors as string[];

      const rendered = await call(anonymous, 'render_public_template', { slug, data: detail.sample_data, color: colors[1] });
      const body = ok(rendered);
      assert.equal(body.anonymous, true);
      assert.equal(body.remaining_today, 0);
      assert.deepEqual((body.template as Body).color, colors[1]);
      assert.match((rendered.content as Array<{ text: string }>)[0]!.text, /PDF ready: http/);

      failed(await call(anonymous, 'get_public_template', { slug: 'no-such-template' }), 'not_found');
      failed(await call(anonymous, 'render_public_template', { slug: 'no-such-template', data: {} }), 'not_found');
      const invalid = failed(await call(anonymous, 'render_public_template', { slug, data: {} }), 'schema_validation_failed');
      assert.ok((invalid.missing_fields as string[]).length > 0);
      const color = failed(
        await call(anonymous, 'render_public_template', { slug, data: detail.sample_data, color: 'no-such-color' }),
        'invalid_color',
      );
      assert.deepEqual(color.colors, colors);
      failed(await call(anonymous, 'render_public_template', { slug, data: 'text' }), 'invalid_data');
      // An invalid key fails the optional-auth tools, as on HTTP; the public reads ignore keys.
      const invalidKey = await connect({ authorization: 'Bearer qk_not_a_real_key' });
      failed(await call(invalidKey, 'render_public_template', { slug, data: detail.sample_data }), 'invalid_api_key');
      failed(await call(invalidKey, 'compile', { latex: HELLO }), 'invalid_api_key');
      ok(await call(invalidKey, 'get_public_template', { slug }));
      // The day's keyless compiles are used up (one over HTTP): a tool error with the way out.
      const exhausted = failed(await call(anonymous, 'compile', { latex: HELLO }), 'anonymous_quota_exhausted');
      assert.equal((exhausted.next_step as Body).action, 'obtain_api_key');
    });

    test('resources and prompts through the SDK', async () => {
      const { resources } = await anonymous.listResources();
      const gallery = resources.filter((r) => r.uri.startsWith('quire://gallery/'));
      assert.equal(gallery.length, (await t.app.inject({ url: '/api/v1/public_templates' })).json().templates.length);
      const read = await anonymous.readResource({ uri: gallery[0]!.uri });
      const [content] = read.contents as Array<{ mimeType: string; text: string }>;
      assert.equal(content!.mimeType, 'application/json');
      const detail = JSON.parse(content!.text);
      assert.ok(detail.schema && detail.sample_data && detail.latex_with_placeholders);
      const { resourceTemplates } = await anonymous.listResourceTemplates();
      assert.deepEqual(resourceTemplates.map((r) => r.uriTemplate), ['quire://gallery/{slug}']);
      await assert.rejects(anonymous.readResource({ uri: 'quire://gallery/no-such-template' }), /-32002|not found/i);

      const { prompts } = await anonymous.listPrompts();
      assert.deepEqual(prompts.map((p) => p.name), ['fix_latex_error', 'write_latex_document', 'fill_public_template']);
      const prompt = await anonymous.getPrompt({ name: 'fill_public_template', arguments: { slug: 'invoice-classic', details: 'Bill ACME for 3 widgets' } });
      const [message] = prompt.messages;
      assert.equal(message!.role, 'user');
      assert.match((message!.content as { text: string }).text, /Bill ACME for 3 widgets/);
      await assert.rejects(anonymous.getPrompt({ name: 'no_such_prompt' }), /-32602|unknown prompt/i);
      assert.deepEqual(await anonymous.ping(), {});
    });
  });
}
