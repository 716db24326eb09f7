// Runs a verifier where the service runs its tools: in the TeX image's sandbox (poppler's pdfsig
// of the image, Java and PDFBox Preflight), on files the test writes into a workspace of its own.
import { execFile } from 'node:child_process';
import { chmod, mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { sandboxed } from '../../src/tex/sandbox/sandbox.js';
import { defaultImageRoot } from '../../src/tex/image/default.js';
import { PDFBOX_CLASSPATH, preflightJar } from '../../src/tex/output/preflight-java.js';
import { JVM } from '../../src/tex/output/warm-validator.js';

const LIMITS = { cpuSeconds: 120, fileBytes: 64 * 1024 * 1024, memoryBytes: 4 * 1024 ** 3, processes: 64 };

/**
 * Exit code and output (stdout then stderr) of `argv` in the image with `files` in its working
 * folder, and the files it wrote there.
 */
export async function inImage(argv: string[], files: Record<string, Buffer>): Promise<{ code: number; output: string; written: Record<string, Buffer> }> {
  const dir = await mkdtemp(join(tmpdir(), 'quire-sign-test-'));
  try {
    await chmod(dir, 0o755);
    for (const [name, data] of Object.entries(files)) await writeFile(join(dir, name), data, { mode: 0o644 });
    const root = defaultImageRoot();
    const command = sandboxed({ workspace: dir, root, isolate: root !== undefined, env: { LC_ALL: 'C.UTF-8', HOME: '/tmp', TMPDIR: '/tmp' }, limits: LIMITS }, argv);
    try {
      const { stdout, stderr } = await promisify(execFile)(command.file, command.args, { encoding: 'utf8', timeout: 120_000, maxBuffer: 16 * 1024 * 1024, ...(command.cwd ? { cwd: command.cwd } : { cwd: dir }), ...(command.env ? { env: command.env } : {}) });
      return { code: 0, output: stdout + stderr, written: await written(dir, files) };
    } catch (err) {
      const failed = err as { code?: number; stdout?: string; stderr?: string };
      return { code: typeof failed.code === 'number' ? failed.code : -1, output: `${failed.stdout ?? ''}${failed.stderr ?? ''}`, written: await written(dir, files) };
    }
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

/** The files of `dir` that the run added (not among `given`). */
async function written(dir: string, given: Record<string, Buffer>): Promise<Record<string, Buffer>> {
  const out: Record<string, Buffer> = {};
  for (const name of await readdir(dir)) if (!(name in given)) out[name] = await readFile(join(dir, name));
  return out;
}

/** poppler's pdfsig of the image on `pdf`. */
export function pdfsig(pdf: Buffer): Promise<{ code: number; output: string }> {
  return inImage(['pdfsig', '-nocert', 'doc.pdf'], { 'doc.pdf': pdf });
}

/**
 * `pdfsig -dump` of the image on `pdf`: the CMS of each signature as poppler reads it from
 * /Contents (doc.pdf.sig0, …), and what it printed (with -dump it only dumps: no verdict).
 */
export async function pdfsigDump(pdf: Buffer): Promise<{ output: string; signatures: Buffer[] }> {
  const run = await inImage(['pdfsig', '-nocert', '-dump', 'doc.pdf'], { 'doc.pdf': pdf });
  const names = Object.keys(run.written).filter((n) => /^doc\.pdf\.sig\d+$/.test(n)).sort();
  return { output: run.output, signatures: names.map((n) => run.written[n]!) };
}

/** PDFBox Preflight (the service's cold path: its jar, Debian's PDFBox, java in the image) on `pdf`: VALID or its error lines. */
export async function preflight(pdf: Buffer): Promise<{ code: number; output: string }> {
  const jar = await preflightJar();
  return inImage(['java', ...JVM, '-cp', ['preflight.jar', ...PDFBOX_CLASSPATH].join(':'), 'Preflight', 'doc.pdf'], { 'doc.pdf': pdf, 'preflight.jar': jar });
}
