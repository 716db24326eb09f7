// The client commands of `quire`: compile, watch and login. They talk HTTP to a Quire server
// (docs/cli.md) and load nothing of the service, so `npx quire compile` starts fast.
import { parseArgs } from 'node:util';
import { CLIENT_USAGE } from './commands.js';
import { createQuireClient } from '../../../clients/typescript/src/index.js';
import { compileOnce, type CompileOptions } from './compile.js';
import { normalizeServer, resolveTarget, saveLogin, type Target } from './config.js';
import { locate, UsageError } from './project.js';
import { EXIT } from './remote.js';
import { nodeFetch } from './transport.js';

const ENGINES = ['pdflatex', 'xelatex', 'lualatex'];

function parse(argv: string[]) {
  return parseArgs({
    args: argv,
    allowPositionals: true,
    options: {
      output: { type: 'string', short: 'o' },
      engine: { type: 'string' },
      texlive: { type: 'string' },
      main: { type: 'string' },
      'output-json': { type: 'string' },
      server: { type: 'string' },
      key: { type: 'string' },
      json: { type: 'boolean', default: false },
      log: { type: 'boolean', default: false },
      verbose: { type: 'boolean', short: 'v', default: false },
      help: { type: 'boolean', short: 'h', default: false },
    },
  });
}

function compileOptions(values: ReturnType<typeof parse>['values']): CompileOptions {
  if (values.engine !== undefined && !ENGINES.includes(values.engine)) throw new UsageError(`--engine must be one of ${ENGINES.join(', ')} (got ${values.engine})`);
  if (values.texlive !== undefined && !/^\d{4}$/.test(values.texlive)) throw new UsageError(`--texlive takes a year such as 2026 (got ${values.texlive})`);
  let output: unknown;
  if (values['output-json'] !== undefined) {
    try {
      output = JSON.parse(values['output-json']);
    } catch (err) {
      throw new UsageError(`--output-json is not JSON: ${(err as Error).message}`);
    }
    if (!output || typeof output !== 'object' || Array.isArray(output)) throw new UsageError('--output-json must be a JSON object, e.g. \'{"pdf_standard":"a-2b"}\'');
  }
  return { engine: values.engine, texlive: values.texlive, output, json: values.json, log: values.log, verbose: values.verbose };
}

function keylessNotice(target: Target): string {
  return `quire: no API key for ${target.server} (--key, QUIRE_API_KEY or quire login): using the keyless tier (pdflatex, a few pages and compiles a day, no images)\n`;
}

async function login(values: ReturnType<typeof parse>['values']): Promise<number> {
  if (!values.server || !values.key) throw new UsageError('login needs --server URL and --key KEY');
  let server: string;
  try {
    server = normalizeServer(values.server);
  } catch (err) {
    throw new UsageError((err as Error).message);
  }
  let status: number;
  let body: { usage?: { used_this_month?: unknown; monthly_limit?: unknown } } = {};
  try {
    const answer = await createQuireClient({ baseUrl: server, apiKey: values.key, fetch: nodeFetch, Request }).GET('/api/v1/usage');
    status = answer.response.status;
    body = (answer.data ?? {}) as typeof body;
  } catch (err) {
    const code = (err as { cause?: { code?: string } }).cause?.code;
    throw new UsageError(code ? `cannot reach the Quire server at ${server} (${code}); nothing was saved` : `${server} did not answer as a Quire server (${(err as Error).message}); nothing was saved`);
  }
  if (status === 401) throw new UsageError(`${server} does not accept this key (invalid_api_key); nothing was saved`);
  if (status !== 200) throw new UsageError(`${server} answered HTTP ${status} to GET /api/v1/usage: is it a Quire server? nothing was saved`);
  const path = await saveLogin(server, values.key, process.env);
  const usage = body.usage;
  process.stdout.write(`saved ${server} and its key to ${path} (mode 0600)${usage?.monthly_limit !== undefined ? `: ${String(usage.used_this_month)}/${String(usage.monthly_limit)} compiles this month` : ''}\n`);
  return EXIT.pdf;
}

/** Runs `quire compile|watch|login …`; the exit code. */
export async function runClient(argv: string[]): Promise<number> {
  // End to end means from the process start (performance.now() counts from it).
  const started = 0;
  const streams = { out: process.stdout, err: process.stderr };
  const [command] = argv;
  try {
    let parsed;
    try {
      parsed = parse(argv.slice(1));
    } catch (err) {
      throw new UsageError((err as Error).message);
    }
    const { values, positionals } = parsed;
    if (values.help) {
      streams.out.write(`usage: quire\n${CLIENT_USAGE}\n\nSee docs/cli.md.\n`);
      return EXIT.pdf;
    }
    if (command === 'login') return await login(values);
    if (positionals.length > 1) throw new UsageError(`${command} takes one PATH (got ${positionals.join(' ')})`);
    const options = compileOptions(values);
    let target: Target;
    try {
      target = await resolveTarget({ server: values.server, key: values.key }, process.env);
    } catch (err) {
      throw new UsageError((err as Error).message);
    }
    const located = await locate(positionals[0] ?? '.', { main: values.main, output: values.output });
    if (!target.key) streams.err.write(keylessNotice(target));
    if (command === 'watch') return await (await import('./watch.js')).watchProject(target, located, options, streams);
    return (await compileOnce(target, located, options, streams, started)).code;
  } catch (err) {
    if (!(err instanceof UsageError)) throw err;
    streams.err.write(`quire ${command}: ${err.message}\n`);
    return EXIT.usage;
  }
}
