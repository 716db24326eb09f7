// Joins the PDFs of a batch into one with qpdf. The inputs are PDFs this service wrote (TeX
// output, never bytes a client uploaded as such), but TeX can copy objects from an included
// PDF asset, so qpdf runs like TeX does: inside the bubblewrap sandbox, under prlimit, as an
// unprivileged user, with no network and only its own workspace writable.
import { spawn } from 'node:child_process';
import { chown, mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { sandboxed } from './sandbox.js';
import { Workspace } from './workspace.js';

const NOBODY = 65534;
const TIMEOUT_MS = 60_000;

export async function mergePdfs(pdfs: Buffer[], options: { isolate: boolean; maxBytes: number }): Promise<{ pdf: Buffer; pages: number }> {
  const root = join(tmpdir(), 'quire-merge');
  await mkdir(root, { recursive: true });
  const dir = await mkdtemp(join(root, 'job-'));
  const asRoot = process.getuid?.() === 0;
  try {
    const names = pdfs.map((_, i) => `in-${String(i).padStart(3, '0')}.pdf`);
    await Promise.all(pdfs.map((pdf, i) => writeFile(join(dir, names[i]!), pdf)));
    if (asRoot) {
      await chown(dir, NOBODY, NOBODY);
      for (const name of names) await chown(join(dir, name), NOBODY, NOBODY);
    }
    const limits = { cpuSeconds: 60, fileBytes: options.maxBytes, memoryBytes: 2 * 1024 ** 3, processes: 8 };
    await run(sandboxed({ workspace: dir, env: {}, isolate: options.isolate, limits }, ['qpdf', '--empty', '--pages', ...names, '--', 'merged.pdf']), asRoot);
    const counted = await run(sandboxed({ workspace: dir, env: {}, isolate: options.isolate, limits }, ['qpdf', '--show-npages', 'merged.pdf']), asRoot);
    // Read back like any job output: no link followed, owned by the sandbox's user, capped.
    const owner = asRoot ? NOBODY : process.getuid!();
    const pdf = await new Workspace(dir, owner).readCapped('merged.pdf', options.maxBytes);
    if (!pdf) throw new Error('qpdf wrote no merged PDF');
    return { pdf, pages: Number(counted.trim()) };
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

function run(command: { file: string; args: string[]; cwd?: string; env?: Record<string, string> }, asRoot: boolean): Promise<string> {
  return new Promise((resolve, reject) => {
    const child = spawn(command.file, command.args, {
      ...(command.cwd ? { cwd: command.cwd } : {}),
      env: command.env ?? {},
      stdio: ['ignore', 'pipe', 'pipe'],
      timeout: TIMEOUT_MS,
      ...(asRoot ? { uid: NOBODY, gid: NOBODY } : {}),
    });
    let out = '';
    child.stdout.on('data', (chunk: Buffer) => (out = (out + chunk.toString()).slice(-65536)));
    child.stderr.on('data', (chunk: Buffer) => (out = (out + chunk.toString()).slice(-65536)));
    child.on('error', reject);
    // qpdf exits 3 when it warns but wrote a usable file.
    child.on('close', (code) => (code === 0 || code === 3 ? resolve(out) : reject(new Error(`qpdf exited ${code}: ${out.slice(0, 500)}`))));
  });
}
