// The text of PDFs this service wrote (pdftotext), for comparing two compiles of one document
// (a paused preamble's verification, paused-cache.ts). TeX can copy objects from an included
// PDF asset, so pdftotext runs like TeX does: in the sandbox, under prlimit, as nobody.
import { chown, mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { runSandboxed } from '../sandbox/sandboxed.js';
import { NOBODY_UID, sandboxUid } from '../sandbox/uids.js';

const TIMEOUT_MS = 30_000;
const TEXT_CAP = 16 * 1024 * 1024;

/** Each PDF's text, laid out as on the page (in the TeX image `root`); null when pdftotext could not read one. */
export async function pdfTexts(pdfs: Buffer[], isolate: boolean, root: string | undefined): Promise<string[] | null> {
  const parent = join(tmpdir(), 'quire-pdftext');
  await mkdir(parent, { recursive: true });
  const dir = await mkdtemp(join(parent, 'job-'));
  const uid = sandboxUid(NOBODY_UID);
  try {
    const names = pdfs.map((_, i) => `in-${i}.pdf`);
    await Promise.all(pdfs.map((pdf, i) => writeFile(join(dir, names[i]!), pdf)));
    if (uid !== undefined) for (const name of ['.', ...names]) await chown(join(dir, name), uid, uid);
    const limits = { cpuSeconds: 30, fileBytes: TEXT_CAP, memoryBytes: 2 * 1024 ** 3, processes: 8 };
    const spec = { workspace: dir, env: {}, isolate, limits, uid, root };
    const texts: string[] = [];
    for (const name of names) {
      const result = await runSandboxed(spec, ['pdftotext', '-q', '-layout', name, '-'], { timeoutMs: TIMEOUT_MS, maxOutput: TEXT_CAP });
      if (result.killed || result.code !== 0) return null;
      texts.push(result.stdout.toString('utf8'));
    }
    return texts;
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}
