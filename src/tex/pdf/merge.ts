// Joins the PDFs of a batch into one with qpdf. The inputs are PDFs this service wrote (TeX
// output, never bytes a client uploaded as such), but TeX can copy objects from an included
// PDF asset, so qpdf runs like TeX does: inside the bubblewrap sandbox, under prlimit, as an
// unprivileged user, with no network and only its own workspace writable.
import { chown, mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { SandboxSpec } from '../sandbox/sandbox.js';
import { runSandboxed } from '../sandbox/sandboxed.js';
import { NOBODY_UID, sandboxUid } from '../sandbox/uids.js';
import { Workspace } from '../sandbox/workspace.js';
import { defaultImageRoot } from '../image/default.js';

const TIMEOUT_MS = 60_000;
/** qpdf's own output (a page count, warnings); it writes the PDF to a file. */
const OUTPUT_CAP = 64 * 1024;

export async function mergePdfs(pdfs: Buffer[], options: { isolate: boolean; maxBytes: number }): Promise<{ pdf: Buffer; pages: number }> {
  const root = join(tmpdir(), 'quire-merge');
  await mkdir(root, { recursive: true });
  const dir = await mkdtemp(join(root, 'job-'));
  const uid = sandboxUid(NOBODY_UID);
  try {
    const names = pdfs.map((_, i) => `in-${String(i).padStart(3, '0')}.pdf`);
    await Promise.all(pdfs.map((pdf, i) => writeFile(join(dir, names[i]!), pdf)));
    if (uid !== undefined) {
      await chown(dir, uid, uid);
      for (const name of names) await chown(join(dir, name), uid, uid);
    }
    const limits = { cpuSeconds: 60, fileBytes: options.maxBytes, memoryBytes: 2 * 1024 ** 3, processes: 8 };
    const spec = { workspace: dir, env: {}, isolate: options.isolate, limits, uid, root: defaultImageRoot() };
    await qpdf(spec, ['--empty', '--pages', ...names, '--', 'merged.pdf']);
    const counted = await qpdf(spec, ['--show-npages', 'merged.pdf']);
    // Read back like any job output: no link followed, owned by the sandbox's user, capped.
    const pdf = await new Workspace(dir, uid ?? process.getuid!()).readCapped('merged.pdf', options.maxBytes);
    if (!pdf) throw new Error('qpdf wrote no merged PDF');
    return { pdf, pages: Number(counted.trim()) };
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

/** qpdf in the sandbox; its stdout. qpdf exits 3 when it warns but wrote a usable file. */
async function qpdf(spec: SandboxSpec, args: string[]): Promise<string> {
  const result = await runSandboxed(spec, ['qpdf', ...args], { timeoutMs: TIMEOUT_MS, maxOutput: OUTPUT_CAP });
  const stdout = result.stdout.toString('utf8');
  if (result.killed) throw new Error(result.killed === 'timeout' ? `qpdf took longer than ${TIMEOUT_MS / 1000} s` : 'qpdf wrote too much output');
  if (result.code !== 0 && result.code !== 3) throw new Error(`qpdf exited ${result.code ?? result.signal}: ${(stdout + result.stderr).slice(0, 500)}`);
  return stdout;
}
