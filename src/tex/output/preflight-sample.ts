// The PDF a warm validator (warm-validator.ts) validates before it waits for a job: a one-page
// PDF/A-1b made the way every job's is (pdflatex with pdfx, source.ts), so the warm-up loads
// the classes a real job needs (Type 1 fonts, XMP, the output intent's ICC profile). Made once
// per process, by pdflatex in the sandbox like any TeX run, from our own fixed source.
import { chown, mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { runSandboxed } from '../sandbox/sandboxed.js';
import { NOBODY_UID, sandboxUid } from '../sandbox/uids.js';
import { Workspace } from '../sandbox/workspace.js';
import { outputSource, xmpdata } from './source.js';
import { defaultImageRoot } from '../image/default.js';

const SOURCE = '\\documentclass{article}\n\\begin{document}\nHello, Preflight. $x^2 + \\alpha$ \\textbf{bold} \\textit{italic}.\n\\end{document}\n';
const CAP = 1024 * 1024;

let made: Promise<Buffer> | null = null;

/** The sample's bytes, made on first use (about 0.3 s); rejects when TeX could not make it. */
export function preflightSample(isolate: boolean): Promise<Buffer> {
  made ??= make(isolate).catch((err: unknown) => {
    made = null;
    throw err;
  });
  return made;
}

async function make(isolate: boolean): Promise<Buffer> {
  const root = join(tmpdir(), 'quire-preflight-sample');
  await mkdir(root, { recursive: true });
  const dir = await mkdtemp(join(root, 'job-'));
  const uid = sandboxUid(NOBODY_UID);
  try {
    await writeFile(join(dir, 'sample.tex'), outputSource(SOURCE, { pdfStandard: 'a-1b' }, 'pdflatex')!);
    await writeFile(join(dir, 'sample.xmpdata'), xmpdata({ title: 'Quire Preflight sample' }));
    if (uid !== undefined) for (const name of ['.', 'sample.tex', 'sample.xmpdata']) await chown(join(dir, name), uid, uid);
    const limits = { cpuSeconds: 30, fileBytes: CAP, memoryBytes: 2 * 1024 ** 3, processes: 8 };
    const argv = ['pdflatex', '-no-shell-escape', '-interaction=nonstopmode', '-halt-on-error', 'sample.tex'];
    const run = await runSandboxed({ workspace: dir, env: { LC_ALL: 'C.UTF-8' }, isolate, limits, uid, root: defaultImageRoot() }, argv, { timeoutMs: 30_000, maxOutput: CAP });
    if (run.killed || run.code !== 0) throw new Error(`pdflatex could not make the Preflight sample (${run.killed ?? run.code}): ${run.stdout.toString('utf8').slice(-500)}`);
    const pdf = await new Workspace(dir, uid ?? process.getuid!()).readCapped('sample.pdf', CAP);
    if (!pdf) throw new Error('pdflatex wrote no Preflight sample');
    return pdf;
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}
