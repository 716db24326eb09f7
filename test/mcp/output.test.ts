// `output` on the MCP compile, render and render_public_template tools (issue 23), with the
// official SDK client over Streamable HTTP and real TeX: the argument is in each tool's
// inputSchema, page_images adds the first page as an image block that decodes to a PNG of the
// reported size, a PNG over 150 KB becomes a text line with its link, bad output is a tool error.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { createAccount, HELLO, testApp, type TestAccount, type TestApp } from '../helpers.js';

type Result = Awaited<ReturnType<Client['callTool']>>;
type Block = { type: string; text?: string; data?: string; mimeType?: string };
type PageImage = { page: number; url: string; width: number; height: number };

/** 30,000 small rectangles of random colours: a PNG that does not compress below 150 KB at 200 dpi. */
const NOISE = String.raw`\documentclass{article}
\usepackage[margin=0pt,paperwidth=4in,paperheight=4in]{geometry}
\pagestyle{empty}
\begin{document}
\noindent\count1=0
\loop
\pdfliteral{0.\pdfuniformdeviate 1000 \space 0.\pdfuniformdeviate 1000 \space 0.\pdfuniformdeviate 1000 \space rg \pdfuniformdeviate 288 \space -\pdfuniformdeviate 288 \space 2 2 re f}%
\advance\count1 by 1
\ifnum\count1<30000 \repeat
\end{document}
`;

describe('MCP tools with output', () => {
  let t: TestApp;
  let pro: TestAccount;
  let client: Client;

  before(async () => {
    t = await testApp();
    await t.app.listen({ host: '127.0.0.1', port: 0 });
    const address = t.app.server.address();
    assert.ok(address && typeof address === 'object');
    pro = await createAccount(t.services, 'pro');
    client = new Client({ name: 'quire-test', version: '1.0.0' });
    await client.connect(new StreamableHTTPClientTransport(new URL(`http://127.0.0.1:${address.port}/mcp`), { requestInit: { headers: pro.headers } }));
    // listTools caches output schemas, so callTool checks structuredContent against them.
    await client.listTools();
  });
  after(async () => {
    await client.close();
    await t.close();
  });

  /** The result's image block, checked to be a PNG of the size the body reports for page 1. */
  function pageImage(result: Result): Buffer {
    assert.equal(result.isError, undefined, JSON.stringify(result.content).slice(0, 2000));
    const blocks = result.content as Block[];
    assert.equal(blocks[0]!.type, 'text');
    const images = blocks.filter((b) => b.type === 'image');
    assert.equal(images.length, 1, JSON.stringify(blocks.map((b) => b.type)));
    assert.equal(images[0]!.mimeType, 'image/png');
    const png = Buffer.from(images[0]!.data!, 'base64');
    assert.deepEqual([...png.subarray(0, 8)], [0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);
    const [first] = (result.structuredContent as { page_images: PageImage[] }).page_images;
    assert.equal(first!.page, 1);
    assert.deepEqual([png.readUInt32BE(16), png.readUInt32BE(20)], [first!.width, first!.height]);
    assert.ok(png.length <= 150 * 1024);
    return png;
  }

  test('compile, render and render_public_template list output in their inputSchema', async () => {
    const { tools } = await client.listTools();
    for (const name of ['compile', 'render', 'render_public_template']) {
      const tool = tools.find((candidate) => candidate.name === name);
      const output = (tool?.inputSchema.properties as Record<string, { properties?: Record<string, unknown> }>).output;
      assert.ok(output?.properties, `${name} has output`);
      assert.deepEqual(Object.keys(output.properties).sort(), ['attachments', 'compress', 'encrypt', 'linearize', 'metadata', 'page_images', 'pdf_standard', 'sign', 'tagged', 'watermark'], name);
    }
  });

  test('compile with page_images: the first page as an image block, and the metadata written', async () => {
    const result = await client.callTool({ name: 'compile', arguments: { latex: HELLO, output: { page_images: { pages: [1, 2], dpi: 100 }, metadata: { title: 'Seen by an agent' } } } });
    pageImage(result);
    assert.deepEqual((result.structuredContent as { page_images: PageImage[] }).page_images.map((p) => [p.page, p.width, p.height]), [[1, 827, 1170]]);
  });

  test('render and render_public_template add the image block too', async () => {
    const created = await t.app.inject({ method: 'POST', url: '/api/v2/templates', headers: pro.headers, payload: { name: 'note', latex_with_placeholders: '\\documentclass{article}\\begin{document}Note for {{ name }}.\\end{document}' } });
    assert.equal(created.statusCode, 201, created.body);
    pageImage(await client.callTool({ name: 'render', arguments: { id: 'note', data: { name: 'Ada' }, output: { page_images: { pages: [1] } } } }));
    const sample = (await t.app.inject({ url: '/api/v1/public_templates/certificate-classic' })).json().sample_data;
    pageImage(await client.callTool({ name: 'render_public_template', arguments: { slug: 'certificate-classic', data: sample, output: { page_images: { pages: [1], dpi: 72 } } } }));
  });

  test('a page image over 150 KB is a text line with its link, not an image', async () => {
    const result = await client.callTool({ name: 'compile', arguments: { latex: NOISE, output: { page_images: { pages: [1], dpi: 200 } } } });
    assert.equal(result.isError, undefined, JSON.stringify(result.content).slice(0, 2000));
    const blocks = result.content as Block[];
    assert.deepEqual(blocks.map((b) => b.type), ['text', 'text']);
    const [first] = (result.structuredContent as { page_images: PageImage[] }).page_images;
    assert.match(blocks[1]!.text!, /^The image of page 1 \(\d+ KB\) is over the 150 KB inline limit; fetch it at /);
    assert.ok(blocks[1]!.text!.endsWith(first!.url));
  });

  test('a compile without page_images has no image block; bad output is a tool error with the field', async () => {
    const plain = await client.callTool({ name: 'compile', arguments: { latex: HELLO, output: { metadata: { title: 'No image' } } } });
    assert.deepEqual((plain.content as Block[]).map((b) => b.type), ['text']);
    const bad = await client.callTool({ name: 'render', arguments: { id: 'note', data: { name: 'Ada' }, output: { page_images: { pages: [1], dpi: 300 } } } });
    assert.equal(bad.isError, true);
    const body = bad.structuredContent as { error: string; fields: Array<{ field: string }> };
    assert.equal(body.error, 'validation_failed');
    assert.ok(body.fields.some((f) => f.field.endsWith('output.page_images.dpi') || f.field === 'output.page_images.dpi'), JSON.stringify(body));
  });
});
