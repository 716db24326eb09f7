// Stress of sandbox starts across processes, to reproduce failures that only show when several
// services share a host (docs/security-sandbox.md §1c). Each child is a process of its own
// with the compile pool a service has (localCompilePool from the configuration of the checkout
// it is given), running one-page pdflatex jobs at the given concurrency for the given seconds;
// it prints its slot 0 uid, then how many jobs succeeded and every failure's message.
//
//   node --import tsx scripts/stress-sandbox-starts.ts <checkout> <concurrency> <seconds> [pid,pid,…]
//
// Pids (root only): each child is given that pid through /proc/sys/kernel/ns_last_pid, e.g.
// 21007,22007 for two processes whose pids agree modulo 1000. Run two of these at once from two
// checkouts (one built with dist/native/kpse-hash.so, one without) to see two builds share a host.
// Give it a TMPDIR of its own (mode 0711) to keep other services on the machine out of its work root.
import { spawn } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const [first, ...rest] = process.argv.slice(2);

async function parent(checkout: string, concurrency: string, seconds: string, pids = ''): Promise<void> {
  const wanted = pids === '' ? [0] : pids.split(',').map(Number);
  const children = wanted.map((pid) => {
    // The next fork gets `pid` (when nothing else forks in between).
    if (pid > 0) writeFileSync('/proc/sys/kernel/ns_last_pid', String(pid - 1));
    const env = { ...process.env, QUIRE_DATA_DIR: mkdtempSync(join(tmpdir(), 'quire-stress-data-')) };
    const child = spawn(process.execPath, ['--import', 'tsx', fileURLToPath(import.meta.url), 'child', checkout, concurrency, seconds], { stdio: ['ignore', 'inherit', 'inherit'], cwd: checkout, env });
    console.log(`child pid ${child.pid} (modulo 1000: ${child.pid! % 1000})`);
    return new Promise((done) => child.on('close', done));
  });
  await Promise.all(children);
}

async function child(checkout: string, concurrency: string, seconds: string): Promise<void> {
  const { loadConfig } = await import(join(checkout, 'src/config.ts'));
  const { localCompilePool } = await import(join(checkout, 'src/services.ts'));
  const { slotUid } = await import(join(checkout, 'src/tex/sandbox/uids.ts'));
  const pool = localCompilePool({ ...loadConfig(), compileConcurrency: Number(concurrency) });
  // Warm sandboxes do not keep a process alive.
  const alive = setInterval(() => {}, 1000);
  await pool.start();
  console.log(`pid ${process.pid}: slot 0 runs as uid ${slotUid(0)}`);
  const until = Date.now() + Number(seconds) * 1000;
  const failures = new Map<string, number>();
  let ok = 0;
  let n = 0;
  const worker = async () => {
    while (Date.now() < until) {
      const source = `\\documentclass{article}\\begin{document}Job ${n++} of ${process.pid}.\\end{document}\n`;
      const why = await pool.run({ source, compiler: 'pdflatex', timeoutMs: 60_000, maxFileBytes: 8 << 20 }).then(
        (result: { outcome: string; log: string }) => (result.outcome === 'ok' ? null : `${result.outcome}: ${result.log.slice(-300)}`),
        (err: Error) => err.message,
      );
      if (why === null) ok++;
      else failures.set(why, (failures.get(why) ?? 0) + 1);
    }
  };
  await Promise.all([...Array(Number(concurrency)).keys()].map(worker));
  console.log(`pid ${process.pid}: ${ok} ok, ${[...failures.values()].reduce((a, b) => a + b, 0)} failed`, [...failures.entries()]);
  await pool.close();
  clearInterval(alive);
  process.exit(0);
}

if (first === 'child') await child(resolve(rest[0]!), rest[1]!, rest[2]!);
else await parent(resolve(first ?? '.'), rest[0] ?? '3', rest[1] ?? '60', rest[2]);
