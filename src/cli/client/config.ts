// Which server `quire compile`/`watch` talk to and with which key: flags, then QUIRE_URL and
// QUIRE_API_KEY, then the file `quire login` writes (~/.config/quire/config.json, mode 0600).
// A saved key is sent only to the server it was saved for, so `--server` elsewhere never
// leaks it.
import { chmod, mkdir, readFile, rename, writeFile } from 'node:fs/promises';
import { homedir } from 'node:os';
import { dirname, join } from 'node:path';

export const DEFAULT_SERVER = 'http://localhost:8080';

export interface Target {
  server: string;
  key: string | null;
  /** Where the key came from, for the keyless notice and `--verbose`. */
  keySource: 'flag' | 'env' | 'config' | null;
}

interface Saved {
  server?: string;
  key?: string;
}

/** $XDG_CONFIG_HOME/quire/config.json, else ~/.config/quire/config.json. */
export function configPath(env: NodeJS.ProcessEnv): string {
  const base = env.XDG_CONFIG_HOME || join(env.HOME || homedir(), '.config');
  return join(base, 'quire', 'config.json');
}

/** `http://host:8080/` and `http://host:8080` are one server. */
export function normalizeServer(url: string): string {
  const parsed = new URL(url);
  if (parsed.protocol !== 'http:' && parsed.protocol !== 'https:') throw new Error(`the server URL must start with http:// or https:// (got ${JSON.stringify(url)})`);
  return parsed.href.replace(/\/+$/, '');
}

async function readSaved(env: NodeJS.ProcessEnv): Promise<Saved> {
  try {
    const parsed = JSON.parse(await readFile(configPath(env), 'utf8')) as unknown;
    return parsed && typeof parsed === 'object' ? (parsed as Saved) : {};
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return {};
    throw new Error(`${configPath(env)} is not readable JSON (${(err as Error).message}); fix it or run quire login again`);
  }
}

export async function resolveTarget(flags: { server?: string; key?: string }, env: NodeJS.ProcessEnv): Promise<Target> {
  const saved = await readSaved(env);
  const server = normalizeServer(flags.server ?? (env.QUIRE_URL || saved.server || DEFAULT_SERVER));
  if (flags.key) return { server, key: flags.key, keySource: 'flag' };
  if (env.QUIRE_API_KEY) return { server, key: env.QUIRE_API_KEY, keySource: 'env' };
  if (saved.key && saved.server && normalizeServer(saved.server) === server) return { server, key: saved.key, keySource: 'config' };
  return { server, key: null, keySource: null };
}

/** Writes the config file readable by its owner only (the folder too), replacing it whole. */
export async function saveLogin(server: string, key: string, env: NodeJS.ProcessEnv): Promise<string> {
  const path = configPath(env);
  await mkdir(dirname(path), { recursive: true, mode: 0o700 });
  const temp = `${path}.${process.pid}.tmp`;
  await writeFile(temp, `${JSON.stringify({ server, key }, null, 2)}\n`, { mode: 0o600 });
  await chmod(temp, 0o600);
  await rename(temp, path);
  return path;
}
