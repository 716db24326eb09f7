// `quire mcp` over stdio with the official SDK's StdioClientTransport against a real listening
// Quire: the lists are the server's own (the extension tools always listed), a compile, a
// failure with its diagnosis, a bad key, and the server going away (a tool error saying so, at
// once). stdout carries JSON-RPC only (the SDK fails on any other line) and the process ends
// cleanly when stdin closes or on SIGTERM.
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { after, before, describe, test } from 'node:test';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { createAccount, testApp, type TestAccount, type TestApp } from '../helpers.js';

type Result = Awaited<ReturnType<Client['callTool']>>;

describe('quire mcp over stdio with the SDK client', () => {
  let t: TestApp;
  let base: string;
  let pro: TestAccount;

  before(async () => {
    t = await testApp({ db: 'sqlite' });
    await t.app.listen({ host: '127.0.0.1', port: 0 });
    const address = t.app.server.address();
    assert.ok(address && typeof address === 'object');
    base = `http://127.0.0.1:${address.port}`;
    pro = await createAccount(t.services, 'pro');
  });
  after(() => t.close());

  async function connect(env: Record<string, string>): Promise<{ client: Client; transport: StdioClientTransport; stderr: () => string }> {
    const transport = new StdioClientTransport({
      command: process.execPath,
      args: ['--import', 'tsx', 'src/cli/quire.ts', 'mcp'],
      env: { PATH: process.env.PATH ?? '/usr/bin:/bin', ...env },
      stderr: 'pipe',
    });
    let stderr = '';
    transport.stderr?.on('data', (chunk: Buffer) => (stderr += chunk.toString('utf8')));
    const client = new Client({ name: 'quire-stdio-test', version: '1.0.0' });
    await client.connect(transport);
    return { client, transport, stderr: () => stderr };
  }

  const text = (result: Result) => (result.content as Array<{ type: string; text: string }>)[0]!.text;

  test('lists exactly the HTTP tools with the extensions, resources and prompts; compiles; a failure carries its diagnosis', async () => {
    const { client } = await connect({ QUIRE_URL: base, QUIRE_API_KEY: pro.key });
    try {
      const http = new Client({ name: 'http', version: '1.0.0' });
      const { StreamableHTTPClientTransport } = await import('@modelcontextprotocol/sdk/client/streamableHttp.js');
      await http.connect(new StreamableHTTPClientTransport(new URL(`${base}/mcp?extensions=1`), { requestInit: { headers: pro.headers } }));
      assert.deepEqual(await client.listTools(), await http.listTools());
      assert.equal((await client.listTools()).tools.length, 21);
      assert.deepEqual(await client.listResources(), await http.listResources());
      assert.deepEqual(await client.listPrompts(), await http.listPrompts());
      await http.close();
      const names = (await client.listTools()).tools.map((tool) => tool.name);
      for (const name of ['compile', 'validate', 'render', 'list_template_versions']) assert.ok(names.includes(name), name);

      const ok = await client.callTool({ name: 'compile', arguments: { latex: '\\documentclass{article}\n\\begin{document}\nHello over stdio.\n\\end{document}\n' } });
      assert.equal(ok.isError, undefined, text(ok));
      const body = ok.structuredContent as { pages: number; pdf_url: string };
      assert.equal(body.pages, 1);
      assert.match(body.pdf_url, /^https?:\/\/.+\/pdf/);

      const broken = await client.callTool({ name: 'compile', arguments: { latex: '\\documentclass{article}\n\\begin{document}\n\\url{https://example.com}\n\\end{document}\n' } });
      assert.equal(broken.isError, true);
      const failure = broken.structuredContent as { error: string; line: number; diagnosis: { error_class: string; suggested_fix: string } };
      assert.equal(failure.error, 'compilation_failed');
      assert.equal(failure.line, 3);
      assert.equal(failure.diagnosis.error_class, 'undefined_command');
      assert.match(failure.diagnosis.suggested_fix, /\\usepackage\{(url|hyperref)\}/);
    } finally {
      await client.close();
    }
  });

  test("without a key: SPEC's four public tools and validate and check_pdf, the extensions that need no key", async () => {
    const { client } = await connect({ QUIRE_URL: base });
    try {
      const names = (await client.listTools()).tools.map((tool) => tool.name).sort();
      assert.deepEqual(names, ['check_pdf', 'compile', 'get_public_template', 'list_public_templates', 'render_public_template', 'validate']);
      assert.match(client.getInstructions() ?? '', /Call `validate` first/);
    } finally {
      await client.close();
    }
  });

  test('a bad key is a tool error naming invalid_api_key', async () => {
    const { client } = await connect({ QUIRE_URL: base, QUIRE_API_KEY: 'qk_not_a_real_key' });
    try {
      const result = await client.callTool({ name: 'usage', arguments: {} });
      assert.equal(result.isError, true);
      assert.equal((result.structuredContent as { error: string }).error, 'invalid_api_key');
    } finally {
      await client.close();
    }
  });

  test('the server going away: a clear tool error at once, no hang; stdin EOF ends the process', async () => {
    // A server of its own, closed mid-session.
    const gone = await testApp({ db: 'sqlite' });
    await gone.app.listen({ host: '127.0.0.1', port: 0 });
    const address = gone.app.server.address();
    assert.ok(address && typeof address === 'object');
    const { client, transport, stderr } = await connect({ QUIRE_URL: `http://127.0.0.1:${address.port}` });
    try {
      assert.ok((await client.listTools()).tools.length > 0);
      await gone.close();
      const started = Date.now();
      const result = await client.callTool({ name: 'compile', arguments: { latex: '\\documentclass{article}\\begin{document}x\\end{document}' } });
      assert.ok(Date.now() - started < 5000);
      assert.equal(result.isError, true);
      assert.match(text(result), new RegExp(`Quire server at http://127\\.0\\.0\\.1:${address.port} could not be reached \\(ECONNREFUSED\\)`));
      await assert.rejects(client.listTools(), /could not be reached/);
      assert.match(stderr(), /quire mcp: forwarding to http:\/\/127\.0\.0\.1:\d+\/mcp/);
    } finally {
      const pid = transport.pid;
      await client.close();
      // close() ends stdin; the process exits by itself with 0.
      assert.ok(pid);
      await waitGone(pid);
    }
  });

  test('SIGTERM ends it with exit code 0 and nothing on stdout', async () => {
    const child = spawn(process.execPath, ['--import', 'tsx', 'src/cli/quire.ts', 'mcp'], { env: { PATH: process.env.PATH ?? '', QUIRE_URL: base }, stdio: 'pipe' });
    let stdout = '';
    child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString('utf8')));
    let stderr = '';
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString('utf8')));
    // Once it says where it forwards to, it is listening on stdin.
    while (!stderr.includes('forwarding to')) await new Promise((resolve) => setTimeout(resolve, 50));
    const [code] = await new Promise<[number | null, NodeJS.Signals | null]>((resolve) => {
      child.on('exit', (exitCode, signal) => resolve([exitCode, signal]));
      child.kill('SIGTERM');
    });
    assert.equal(code, 0);
    assert.equal(stdout, '');
  });
});

async function waitGone(pid: number): Promise<void> {
  for (let i = 0; i < 50; i++) {
    try {
      process.kill(pid, 0);
    } catch {
      return;
    }
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  assert.fail(`quire mcp (pid ${pid}) still running 5 s after stdin closed`);
}
