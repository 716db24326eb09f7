// `quire mcp`'s timeout against a real slow HTTP server on loopback that sends its headers and never
// finishes the body, while 6 × 20 MB lines arrive on stdin (issue 37, item 7: the door waited
// 38–58 s, until the server hung up). Each stalled request is answered with a timeout error within
// QUIRE_MCP_TIMEOUT_SECONDS plus a margin, each line over QUIRE_MCP_MAX_MESSAGE_MB with a JSON-RPC
// error carrying its id (never forwarded: the server's largest body is the canary), and the door
// keeps serving afterwards.
import assert from 'node:assert/strict';
import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { createServer, type ServerResponse } from 'node:http';
import { describe, test } from 'node:test';
import { recoverId } from '../../src/cli/stdio-lines.js';

const TIMEOUT_S = 2;
const LIMIT_MB = 8;
/** Slack for a loaded 2-core machine; without the fix no answer comes at all (the server never hangs up). */
const MARGIN_MS = 10_000;

type Answer = { id: unknown; result?: { isError?: boolean; content?: Array<{ text: string }> }; error?: { code: number; message: string } };

/** A loopback server that answers `ping` at once and stalls everything else after its headers. */
async function slowServer() {
  const stalled: ServerResponse[] = [];
  const seen = { stalled: 0, largestBody: 0 };
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const body = Buffer.concat(chunks);
      seen.largestBody = Math.max(seen.largestBody, body.length);
      const message = JSON.parse(body.toString('utf8')) as { id: unknown; method: string };
      if (message.method === 'ping') {
        res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ jsonrpc: '2.0', id: message.id, result: {} }));
        return;
      }
      res.writeHead(200, { 'content-type': 'application/json', 'content-length': '100000' });
      res.write('{"jsonrpc":"2.0","id":');
      seen.stalled++;
      stalled.push(res);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address();
  assert.ok(address && typeof address === 'object');
  return {
    url: `http://127.0.0.1:${address.port}`,
    seen,
    close: () => {
      server.closeAllConnections();
      return new Promise((resolve) => server.close(resolve));
    },
  };
}

/** The door's answers by id, each with the time it arrived. */
function answers(child: ChildProcessWithoutNullStreams) {
  const got = new Map<string, { at: number; answer: Answer }>();
  const waiting = new Map<string, () => void>();
  let buffered = '';
  child.stdout.on('data', (chunk: Buffer) => {
    buffered += chunk.toString('utf8');
    for (let end = buffered.indexOf('\n'); end !== -1; end = buffered.indexOf('\n')) {
      const answer = JSON.parse(buffered.slice(0, end)) as Answer;
      buffered = buffered.slice(end + 1);
      const key = JSON.stringify(answer.id);
      got.set(key, { at: Date.now(), answer });
      waiting.get(key)?.();
    }
  });
  return async (id: string, deadlineMs = 60_000): Promise<{ at: number; answer: Answer }> => {
    const key = JSON.stringify(id);
    if (!got.has(key)) {
      await new Promise<void>((resolve, reject) => {
        const timer = setTimeout(() => reject(new Error(`no answer for ${id} within ${deadlineMs} ms`)), deadlineMs);
        waiting.set(key, () => {
          clearTimeout(timer);
          resolve();
        });
      });
    }
    return got.get(key)!;
  };
}

function write(child: ChildProcessWithoutNullStreams, data: string | Buffer): Promise<number> {
  return new Promise((resolve, reject) => child.stdin.write(data, (err) => (err ? reject(err) : resolve(Date.now()))));
}

const call = (id: string, latex: string) => JSON.stringify({ jsonrpc: '2.0', id, method: 'tools/call', params: { name: 'compile', arguments: { latex } } });
/** As the MCP SDK writes a request: the id last, after 20 MB of params. */
const sdkStyle = (id: string, latex: string) => JSON.stringify({ method: 'tools/call', params: { name: 'compile', arguments: { latex } }, jsonrpc: '2.0', id });

describe('quire mcp: the timeout holds whatever arrives on stdin', () => {
  test('headers then silence, during 6 × 20 MB lines: timeout errors in time, big lines refused by id, still serving', async () => {
    const server = await slowServer();
    const child = spawn(process.execPath, ['--import', 'tsx', 'src/cli/quire.ts', 'mcp'], {
      env: { PATH: process.env.PATH ?? '', QUIRE_URL: server.url, QUIRE_MCP_TIMEOUT_SECONDS: String(TIMEOUT_S), QUIRE_MCP_MAX_MESSAGE_MB: String(LIMIT_MB) },
      stdio: 'pipe',
    });
    let stderr = '';
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString('utf8')));
    const answer = answers(child);
    try {
      while (!stderr.includes('forwarding to')) await new Promise((resolve) => setTimeout(resolve, 50));
      const timedOut = (text: string | undefined) => assert.match(text ?? '', new RegExp(`could not be reached \\(no answer within ${TIMEOUT_S} s\\)`));

      const sent = new Map<string, number>();
      sent.set('slow', await write(child, `${JSON.stringify({ jsonrpc: '2.0', id: 'slow', method: 'tools/list' })}\n`));
      const filler = 'x'.repeat(20 * 1024 * 1024);
      for (let i = 1; i <= 6; i++) await write(child, `${(i % 2 ? call : sdkStyle)(`big-${i}`, filler)}\n`);
      // Under the bound: forwarded, and stalled like the first.
      const middle = 'y'.repeat(4 * 1024 * 1024);
      for (const id of ['mid-1', 'mid-2']) sent.set(id, await write(child, `${call(id, middle)}\n`));

      const slow = await answer('slow');
      assert.ok(slow.at - sent.get('slow')! < TIMEOUT_S * 1000 + MARGIN_MS, `answered after ${slow.at - sent.get('slow')!} ms`);
      assert.equal(slow.answer.error?.code, -32603);
      timedOut(slow.answer.error?.message);
      for (const id of ['mid-1', 'mid-2']) {
        const mid = await answer(id);
        assert.ok(mid.at - sent.get(id)! < TIMEOUT_S * 1000 + MARGIN_MS, `${id} answered after ${mid.at - sent.get(id)!} ms`);
        assert.equal(mid.answer.result?.isError, true);
        timedOut(mid.answer.result?.content?.[0]?.text);
      }
      for (let i = 1; i <= 6; i++) {
        const big = (await answer(`big-${i}`)).answer;
        assert.equal(big.error?.code, -32600);
        assert.match(big.error?.message ?? '', new RegExp(`A message of 20\\.0 MB is over this proxy's limit of ${LIMIT_MB} MB \\(QUIRE_MCP_MAX_MESSAGE_MB\\)`));
      }
      // Canary: the stalls were real (headers sent, body never finished) and no 20 MB line reached the server.
      assert.equal(server.seen.stalled, 3);
      assert.ok(server.seen.largestBody > 4 * 1024 * 1024 && server.seen.largestBody < LIMIT_MB * 1024 * 1024, String(server.seen.largestBody));

      // Still serving: a quick answer passes through, and a new stall times out again.
      await write(child, `${JSON.stringify({ jsonrpc: '2.0', id: 'ping', method: 'ping' })}\n`);
      assert.deepEqual((await answer('ping', 10_000)).answer, { jsonrpc: '2.0', id: 'ping', result: {} });
      const again = await write(child, `${JSON.stringify({ jsonrpc: '2.0', id: 'slow-again', method: 'resources/list' })}\n`);
      const second = await answer('slow-again');
      assert.ok(second.at - again < TIMEOUT_S * 1000 + MARGIN_MS);
      timedOut(second.answer.error?.message);

      const exited = new Promise<number | null>((resolve) => child.on('exit', resolve));
      child.stdin.end();
      assert.equal(await exited, 0);
    } finally {
      child.kill();
      await server.close();
    }
  });

  test('an over-long line keeps its id when either end shows it', () => {
    assert.equal(recoverId('{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"a', 'xx"}}}'), 7);
    assert.equal(recoverId('{ "id" : "a\\"b", "method"', ''), 'a"b');
    assert.equal(recoverId('{"method":"tools/call","params":{"latex":"xx', 'xx"}},"jsonrpc":"2.0","id":"big-2"}\n'), 'big-2');
    // An "id" inside params is not the message's.
    assert.equal(recoverId('{"method":"tools/call","params":{"id":3,"x":"', 'xx","id":4}}'), null);
    assert.equal(recoverId('{"method":"x","params":{"latex":"', 'xxxx"}}'), null);
  });
});
