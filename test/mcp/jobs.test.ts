// MCP doors of async jobs with the official SDK client (which checks every structuredContent
// against the advertised outputSchema): compile with async and idempotency_key, get_job,
// replays without a second charge, another account's job, anonymous async refused.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { createAccount, HELLO, testApp, type TestAccount, type TestApp } from '../helpers.js';
import { waitForJob } from '../jobs/receiver.js';

type Body = Record<string, unknown>;

describe('MCP async tools', () => {
  let t: TestApp;
  let url: URL;
  let pro: TestAccount;
  const clients: Client[] = [];

  async function connect(headers: Record<string, string> = {}): Promise<Client> {
    const client = new Client({ name: 'quire-test', version: '1.0.0' });
    await client.connect(new StreamableHTTPClientTransport(url, { requestInit: { headers } }));
    await client.listTools();
    clients.push(client);
    return client;
  }

  before(async () => {
    t = await testApp();
    await t.app.listen({ host: '127.0.0.1', port: 0 });
    const address = t.app.server.address();
    assert.ok(address && typeof address === 'object');
    url = new URL(`http://127.0.0.1:${address.port}/mcp`);
    pro = await createAccount(t.services, 'pro');
  });
  after(async () => {
    for (const client of clients) await client.close();
    await t.close();
  });

  const used = async () => (await t.app.inject({ url: '/api/v1/usage', headers: pro.headers })).json().usage.used_this_month as number;

  test('compile async + idempotency_key: one job, one charge; get_job returns the CompileSuccess', async () => {
    const keyed = await connect(pro.headers);
    const tools = (await keyed.listTools()).tools;
    const compile = tools.find((tool) => tool.name === 'compile')!;
    assert.deepEqual(Object.keys(compile.inputSchema.properties ?? {}).filter((k) => ['async', 'callback_url', 'idempotency_key'].includes(k)), ['async', 'callback_url', 'idempotency_key']);
    assert.ok(tools.find((tool) => tool.name === 'get_job'));

    const before = await used();
    const args = { latex: HELLO, async: true, idempotency_key: 'mcp-1' };
    const first = await keyed.callTool({ name: 'compile', arguments: args });
    assert.equal(first.isError, undefined, JSON.stringify(first.content));
    const accepted = first.structuredContent as Body;
    assert.equal(accepted.status, 'running');
    assert.match((first.content as Array<{ text: string }>)[0]!.text, /get_job/);
    const again = await keyed.callTool({ name: 'compile', arguments: args });
    assert.equal((again.structuredContent as Body).job_id, accepted.job_id);
    const reused = await keyed.callTool({ name: 'compile', arguments: { ...args, latex: HELLO + '%' } });
    assert.equal(reused.isError, true);
    assert.equal((reused.structuredContent as Body).error, 'idempotency_key_reused');

    const job = await waitForJob(async () => (await keyed.callTool({ name: 'get_job', arguments: { job_id: accepted.job_id } })).structuredContent as Body);
    assert.equal(job.status, 'succeeded');
    const http = await t.app.inject({ url: `/api/v1/jobs/${String(accepted.job_id)}`, headers: pro.headers });
    assert.deepEqual(job, http.json());
    assert.equal(await used(), before + 1);

    const sync = await keyed.callTool({ name: 'compile', arguments: { latex: HELLO, idempotency_key: 'mcp-2' } });
    const syncAgain = await keyed.callTool({ name: 'compile', arguments: { latex: HELLO, idempotency_key: 'mcp-2' } });
    assert.deepEqual(syncAgain.structuredContent, sync.structuredContent);
    assert.equal(await used(), before + 2);
  });

  test('get_job of another account is job_not_found; anonymous async is refused', async () => {
    const keyed = await connect(pro.headers);
    const accepted = (await keyed.callTool({ name: 'compile', arguments: { latex: HELLO, async: true } })).structuredContent as Body;
    const other = await connect((await createAccount(t.services, 'pro')).headers);
    const foreign = await other.callTool({ name: 'get_job', arguments: { job_id: accepted.job_id } });
    assert.equal(foreign.isError, true);
    assert.equal((foreign.structuredContent as Body).error, 'job_not_found');
    const anonymous = await connect();
    const refused = await anonymous.callTool({ name: 'compile', arguments: { latex: HELLO, async: true } });
    assert.equal(refused.isError, true);
    assert.equal((refused.structuredContent as Body).error, 'async_not_available_anonymously');
    await waitForJob(async () => (await keyed.callTool({ name: 'get_job', arguments: { job_id: accepted.job_id } })).structuredContent as Body);
  });
});
