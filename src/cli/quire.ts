// `quire`: the operator's command line (same configuration as the server; safe while it runs)
// and the client commands compile, watch and login (src/cli/client/, docs/cli.md), which
// talk HTTP to a server. The service loads only for operator commands, so a client command
// starts in a fraction of the time.
import { parseArgs } from 'node:util';
import type { Account } from '../accounts/accounts.js';
import type { Services } from '../services.js';
import { CLIENT_COMMANDS, CLIENT_USAGE } from './client/commands.js';

const USAGE = `usage: quire <command> [options] [--json]

${CLIENT_USAGE}

  account create --email E --plan free|starter|pro|business
  account list
  account show --email E
  account set-plan --email E --plan P
  key rotate --email E
  key revoke --email E
  worker      run a compile worker (QUIRE_QUEUE=bullmq) until SIGTERM
  mcp         an MCP server over stdio in front of the Quire server at QUIRE_URL
              (default http://localhost:8080) with QUIRE_API_KEY (docs/mcp.md)

Reads QUIRE_DATA_DIR and QUIRE_DATABASE_URL like the server.`;

type Output = { json: unknown; text: string };

function accountText(a: Account): string {
  return `${a.id}\t${a.email}\t${a.plan}\t${a.created_at}`;
}

async function run(services: Services, command: string, values: Record<string, string | boolean | undefined>): Promise<Output> {
  const email = () => {
    if (typeof values.email !== 'string') throw new UsageError('--email is required');
    return values.email;
  };
  const plan = () => {
    if (typeof values.plan !== 'string') throw new UsageError('--plan is required');
    return values.plan;
  };
  switch (command) {
    case 'account create': {
      const { account, apiKey } = await services.accounts.create({ email: email(), plan: plan() });
      return {
        json: { ...account, api_key: apiKey },
        text: `created account ${account.email} (${account.plan}), id ${account.id}\nAPI key (shown once): ${apiKey}`,
      };
    }
    case 'account list': {
      const accounts = await services.accounts.list();
      return { json: accounts, text: accounts.map(accountText).join('\n') || '(no accounts)' };
    }
    case 'account show': {
      const account = await services.accounts.byEmail(email());
      const key = await services.accounts.activeKey(account.id);
      const { monthlyUse } = await import('../quota/plans.js');
      const monthly = monthlyUse(account.plan, (await services.usage.monthly(account.id)).used);
      const json = { ...account, api_key: key, ...monthly };
      return {
        json,
        text: `${accountText(account)}\nkey: ${key ? `${key.prefix}… created ${key.created_at}` : 'none (revoked)'}\ncompiles this month: ${monthly.used_this_month}${monthly.grace_used ? ` (+${monthly.grace_used} in the grace buffer, not charged)` : ''}`,
      };
    }
    case 'account set-plan': {
      const account = await services.accounts.setPlan(email(), plan());
      return { json: account, text: `${account.email} is now on ${account.plan}` };
    }
    case 'key rotate': {
      const account = await services.accounts.byEmail(email());
      const apiKey = await services.accounts.rotateKey(account.id);
      return { json: { email: account.email, api_key: apiKey }, text: `new API key for ${account.email} (old key revoked): ${apiKey}` };
    }
    case 'key revoke': {
      const account = await services.accounts.byEmail(email());
      await services.accounts.revokeKeys(account.id);
      return { json: { email: account.email, revoked: true }, text: `revoked the API key of ${account.email}` };
    }
    default:
      throw new UsageError(`unknown command "${command}"`);
  }
}

class UsageError extends Error {}

export async function main(argv: string[]): Promise<number> {
  // A client command talks HTTP and needs nothing of the service: it goes first, and the
  // operator's modules load only below (the service's import alone takes seconds).
  if (argv[0] !== undefined && CLIENT_COMMANDS.has(argv[0])) return (await import('./client/index.js')).runClient(argv);
  const [{ ConfigError, loadConfig, loadMcpProxyConfig }, { ServiceError }] = await Promise.all([import('../config.js'), import('../errors.js')]);
  // Before parseArgs: stdout is the MCP client's, so nothing but JSON-RPC may reach it.
  if (argv[0] === 'mcp') {
    try {
      const { runStdioProxy } = await import('./mcp-stdio.js');
      return await runStdioProxy(loadMcpProxyConfig());
    } catch (err) {
      if (!(err instanceof ConfigError)) throw err;
      console.error(`quire mcp: ${err.message}`);
      return 2;
    }
  }
  const { values, positionals } = parseArgs({
    args: argv,
    allowPositionals: true,
    options: {
      email: { type: 'string' },
      plan: { type: 'string' },
      json: { type: 'boolean', default: false },
      help: { type: 'boolean', short: 'h', default: false },
    },
  });
  if (values.help || positionals.length === 0) {
    console.log(USAGE);
    return values.help ? 0 : 2;
  }
  if (positionals.join(' ') === 'worker') {
    const { runWorker } = await import('../worker.js');
    return runWorker();
  }
  let services: Services | undefined;
  try {
    const config = loadConfig();
    const [{ openServices }, { default: pino }] = await Promise.all([import('../services.js'), import('pino')]);
    services = await openServices(config, {
      log: pino({ level: 'silent' }),
      overrides: { engines: { pdflatex: { available: true }, xelatex: { available: true }, lualatex: { available: true } } },
    });
    const out = await run(services, positionals.slice(0, 2).join(' '), values);
    console.log(values.json ? JSON.stringify(out.json, null, 2) : out.text);
    return 0;
  } catch (err) {
    if (err instanceof UsageError) {
      console.error(`quire: ${err.message}\n\n${USAGE}`);
      return 2;
    }
    if (err instanceof ServiceError || err instanceof ConfigError) {
      if (values.json && err instanceof ServiceError) console.log(JSON.stringify(err.body()));
      console.error(`quire: ${err.message}`);
      return 1;
    }
    throw err;
  } finally {
    await services?.close();
  }
}

process.exitCode = await main(process.argv.slice(2));
