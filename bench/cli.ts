// Bench cases of the `quire` client commands (issue 42), each interleaved with latexmk on the
// same files in the same TeX image: `quire compile` of a fresh one-pager measured as a user
// feels it — process start to the PDF on disk (the built bin/quire.js, its own Node process) —
// against `latexmk -pdf` in a fresh folder (goal ≤ 0.5×); and one edit-to-PDF cycle of a
// running `quire watch` (the save, the debounce, the compile, the atomic write) against
// latexmk's rerun after the same edit in a folder it has built before (goal ≤ 0.3×).
import { spawn, type ChildProcessByStdio } from 'node:child_process';
import { mkdir, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { Readable } from 'node:stream';
import { bare } from './bare.js';
import type { OutputCase } from './output.js';

// BENCH_QUIRE_BIN: another build's bin/quire.js (an older commit's, say), to compare in the same conditions.
const BIN = process.env.BENCH_QUIRE_BIN ?? join(import.meta.dirname, '..', 'bin', 'quire.js');
const hello = (n: number) => `\\documentclass{article}\n\\begin{document}\nHello, Quire. A one-page document.\n\\end{document}\n% cli ${n}\n`;
const LATEXMK = ['-pdf', '-interaction=nonstopmode', '-halt-on-error', 'main.tex'];

function quireCompile(dir: string, server: string, key: string): Promise<void> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [BIN, 'compile', dir, '--server', server, '--key', key], { stdio: ['ignore', 'ignore', 'pipe'] });
    let stderr = '';
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    child.on('error', reject);
    child.on('close', (code) => (code === 0 ? resolve() : reject(new Error(`quire compile exited ${code}: ${stderr}`))));
  });
}

export interface CliCases {
  cases: OutputCase[];
  close(): Promise<void>;
}

export function cliCases(root: string, server: string, key: string): CliCases {
  let seq = 0;
  const fresh = async (n: number) => {
    const dir = join(root, `c${seq++}`);
    await mkdir(dir);
    await writeFile(join(dir, 'main.tex'), hello(n));
    return dir;
  };

  // One watcher and one latexmk folder for the whole case, started on first use.
  const watchDir = join(root, 'watched');
  const latexmkDir = join(root, 'latexmk-rerun');
  let latexmkBuilt = false;
  let watcher: ChildProcessByStdio<null, Readable, Readable> | null = null;
  let wrote = 0;
  let waiting: { count: number; resolve: () => void; reject: (err: Error) => void } | null = null;
  /** What the watched main.tex holds, and how many times a failed compile was retried by saving again. */
  let saved = hello(-1);
  let retries = 0;
  const MAX_RETRIES = 3;
  const startWatch = async () => {
    await mkdir(watchDir, { recursive: true });
    await writeFile(join(watchDir, 'main.tex'), hello(-1));
    watcher = spawn(process.execPath, [BIN, 'watch', watchDir, '--server', server, '--key', key], { stdio: ['ignore', 'pipe', 'pipe'] });
    // What the watcher says besides its PDFs goes to the bench's stderr: a refused or failed
    // compile is otherwise a silent stall (the bench waits for a PDF that will not come).
    watcher.stderr.on('data', (chunk: Buffer) => {
      for (const line of chunk.toString().split('\n')) {
        if (line && !line.startsWith('watching ')) process.stderr.write(`quire watch: ${line}\n`);
        // The compile the bench waits for failed (a server fault): save again, so that it comes.
        // A few times: a server that keeps failing ends the row with what it said.
        if (line.startsWith('(kept the last good PDF') && waiting) {
          if (++retries > MAX_RETRIES) waiting.reject(new Error(`quire watch: ${retries - 1} compiles in a row failed on the server`));
          else void writeFile(join(watchDir, 'main.tex'), `${saved}% retry ${retries}\n`);
        }
      }
    });
    watcher.stdout.on('data', (chunk: Buffer) => {
      wrote += chunk.toString().split('\n').filter((line) => line.startsWith('wrote ')).length;
      if (waiting && wrote >= waiting.count) waiting.resolve();
    });
    await nextPdf();
  };
  const nextPdf = () =>
    new Promise<void>((resolve, reject) => {
      retries = 0;
      waiting = { count: wrote + 1, resolve, reject };
    });

  return {
    cases: [
      {
        name: 'quire compile one-pager, start to PDF',
        service: async (n) => {
          const dir = await fresh(n);
          await quireCompile(dir, server, key);
          await rm(dir, { recursive: true, force: true });
        },
        bare: async (n) => {
          const dir = await fresh(n);
          await bare(dir, 'latexmk', LATEXMK);
          await rm(dir, { recursive: true, force: true });
        },
        goal: { kind: 'ratio', value: 0.5 },
      },
      {
        name: 'quire watch edit to PDF vs latexmk rerun',
        service: async (n) => {
          if (!watcher) await startWatch();
          const done = nextPdf();
          saved = hello(n);
          await writeFile(join(watchDir, 'main.tex'), saved);
          await done;
        },
        bare: async (n) => {
          if (!latexmkBuilt) {
            latexmkBuilt = true;
            await mkdir(latexmkDir, { recursive: true });
            await writeFile(join(latexmkDir, 'main.tex'), hello(-1));
            await bare(latexmkDir, 'latexmk', LATEXMK);
          }
          await writeFile(join(latexmkDir, 'main.tex'), hello(n));
          await bare(latexmkDir, 'latexmk', LATEXMK);
        },
        goal: { kind: 'ratio', value: 0.3 },
      },
    ],
    async close() {
      if (watcher) {
        const exited = new Promise((resolve) => watcher!.on('close', resolve));
        watcher.kill('SIGINT');
        await exited;
      }
    },
  };
}
