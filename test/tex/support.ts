// What the runner tests check after a job: the PDF's text or bytes, and the processes a job uid left.
import assert from 'node:assert/strict';
import { execFileSync, spawnSync } from 'node:child_process';

/** The PDF's text, laid out as on the page. */
export function text(pdf: Buffer | undefined): string {
  assert.ok(pdf, 'a PDF');
  return execFileSync('pdftotext', ['-layout', '-', '-'], { input: pdf }).toString('utf8');
}

/** The PDF without what changes from run to run: its dates and its ID (same lengths, so offsets hold). */
export function stable(pdf: Buffer | undefined): string {
  assert.ok(pdf, 'a PDF');
  return pdf
    .toString('latin1')
    .replace(/\/(CreationDate|ModDate) ?\(D:[^)]*\)/g, (m) => m.replace(/\(D:[^)]*\)/, (d) => '('.padEnd(d.length - 1, '0') + ')'))
    .replace(/\/ID ?\[ ?<[0-9A-Fa-f]+> ?<[0-9A-Fa-f]+> ?\]/g, (m) => m.replace(/[0-9A-Fa-f]/g, '0'));
}

/** Processes still owned by `uid` (none may survive a job); none to look for without a uid. */
export function leftovers(uid: number | undefined): string {
  if (uid === undefined) return '';
  const ps = spawnSync('ps', ['-u', String(uid), '-o', 'stat=,comm='], { encoding: 'utf8' }).stdout;
  return ps
    .split('\n')
    .filter((line) => line.trim() && !line.trim().startsWith('Z'))
    .join('\n');
}

/** Leftovers once the kernel has finished tearing down killed or closed sandboxes' PID namespaces (at most 3 s). */
export async function settledLeftovers(uid: number | undefined): Promise<string> {
  const until = Date.now() + 3000;
  let left = leftovers(uid);
  while (left !== '' && Date.now() < until) {
    await new Promise((resolve) => setTimeout(resolve, 50));
    left = leftovers(uid);
  }
  return left;
}
