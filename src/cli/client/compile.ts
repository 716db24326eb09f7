// One compile of a project folder, shared by `quire compile` and `quire watch`: gather and zip
// the files, send them, write the PDF atomically (a viewer never reads half a file), and say
// what happened — the summary and warnings, or the diagnosis, or what to do about a refusal.
// Returns the exit code (docs/cli.md).
import { mkdir, rename, rm, writeFile } from 'node:fs/promises';
import { basename, dirname, join } from 'node:path';
import type { Target } from './config.js';
import { collect, type Collected, type Located, UsageError, zipProject } from './project.js';
import { formatFailure, formatSuccess, formatWarnings, type Refusal, shownPath, type Success, type Warning } from './print.js';
import { startProgress } from './progress.js';
import { compileRemote, ConnectionError, EXIT, exitCodeOf } from './remote.js';

export interface CompileOptions {
  engine?: string;
  texlive?: string;
  /** The parsed --output-json. */
  output?: unknown;
  json: boolean;
  log: boolean;
  verbose: boolean;
}

export interface Streams {
  out: NodeJS.WriteStream;
  err: NodeJS.WriteStream;
}

export interface Outcome {
  code: number;
  /** The PDF was written (exit 0). */
  written: boolean;
  /** The service's answer when there was one. */
  body?: unknown;
  pages?: number;
}

/** Writes `data` beside `path` under a dot name, then renames it over `path`. */
export async function writeAtomically(path: string, data: Uint8Array): Promise<void> {
  await mkdir(dirname(path), { recursive: true });
  const temp = join(dirname(path), `.${basename(path)}.${process.pid}.quire-tmp`);
  try {
    await writeFile(temp, data);
    await rename(temp, path);
  } catch (err) {
    await rm(temp, { force: true });
    throw err;
  }
}

function sourceLines(located: Located, collected: Collected) {
  const localName = (serverName: string) => (serverName === collected.mainName ? located.main : collected.files.has(serverName) ? serverName : null);
  return {
    localPath(serverName: string) {
      const rel = localName(serverName);
      return rel === null ? null : shownPath(join(located.root, rel));
    },
    sourceLine(serverName: string, line: number) {
      const rel = localName(serverName);
      const data = rel === null ? undefined : collected.files.get(serverName);
      if (!data) return null;
      return new TextDecoder().decode(data).split(/\r?\n/)[line - 1] ?? null;
    },
  };
}

/** What to do about a refusal that is not the document's fault, from the fields the body carries. */
function refusalAdvice(body: Refusal, target: Target): string[] {
  const out: string[] = [];
  const nextStep = body.next_step as { signup_url?: string } | undefined;
  if (typeof body.resets_at === 'string') out.push(`  the limit resets at ${body.resets_at}`);
  else if (typeof body.retry_after_seconds === 'number') out.push(`  retry in ${body.retry_after_seconds} s`);
  if (typeof body.upgrade_url === 'string') out.push(`  upgrade the plan: ${body.upgrade_url}`);
  if (!target.key) {
    out.push(`  this was the keyless tier: get an API key${nextStep?.signup_url ? ` (${nextStep.signup_url})` : ''}, then run quire login --server ${target.server} --key <KEY>`);
  }
  return out;
}

export async function compileOnce(
  target: Target,
  located: Located,
  options: CompileOptions,
  streams: Streams,
  started: number,
  signal?: AbortSignal,
  gathered?: Collected,
): Promise<Outcome> {
  const say = (line: string) => {
    if (!options.json) streams.out.write(`${line}\n`);
  };
  const progress = startProgress(streams.err);
  try {
    const collected = gathered ?? (await collect(located));
    if (options.verbose) {
      streams.err.write(`sending ${collected.files.size} files (${(collected.bytes / 1024).toFixed(0)} KiB) from ${shownPath(located.root)}, main file ${located.main}${collected.mainName !== located.main ? ' (as main.tex)' : ''}\n`);
      for (const skip of collected.skipped) streams.err.write(`  skipped ${skip.path}: ${skip.reason}\n`);
    }
    const body: Record<string, unknown> = { project_zip: Buffer.from(zipProject(collected.files)).toString('base64') };
    if (options.engine) body.compiler = options.engine;
    if (options.texlive) body.texlive = options.texlive;
    if (options.output !== undefined) body.output = options.output;
    progress.stage('uploading and compiling on the server');
    const result = await compileRemote(target.server, target.key, body, { signal, stage: (name) => progress.stage(name) });
    progress.stop();
    if (options.json) streams.out.write(`${JSON.stringify(result.body, null, 2)}\n`);
    if (result.ok) {
      await writeAtomically(located.output, result.pdf);
      say(formatSuccess(shownPath(located.output), result.body as unknown as Success, performance.now() - started));
      const warnings = (result.body.warnings ?? []) as Warning[];
      for (const line of formatWarnings(warnings, shownPath(join(located.root, located.main)))) say(line);
      return { code: EXIT.pdf, written: true, body: result.body, pages: result.body.pages };
    }
    const code = exitCodeOf(result.body.error, result.status);
    if (!options.json) {
      if (result.body.error === 'compilation_failed') streams.err.write(`${formatFailure(result.body, sourceLines(located, collected))}\n`);
      else streams.err.write(`quire: ${result.body.message} (${result.body.error})\n${refusalAdvice(result.body, target).map((l) => `${l}\n`).join('')}`);
    }
    if (options.log && typeof result.body.log === 'string') streams.err.write(`--- log ---\n${result.body.log}\n--- end of log ---\n`);
    return { code, written: false, body: result.body };
  } catch (err) {
    if (err instanceof ConnectionError || err instanceof UsageError) {
      streams.err.write(`quire: ${err.message}\n`);
      return { code: EXIT.usage, written: false };
    }
    throw err;
  } finally {
    progress.stop();
  }
}
