// Shared parts of the security tests: a canary (a file with random content outside every
// workspace) and the checks that its bytes never reach a response, a log line or a stored file.
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { readdirSync, readFileSync, statSync, writeFileSync, chmodSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import pino from 'pino';

export interface Canary {
  path: string;
  secret: string;
}

/** A world-readable file in the host's tmpdir: the host would read it if it followed a link. */
export function makeCanary(): Canary {
  const secret = `CANARY-${randomBytes(16).toString('hex')}`;
  const path = join(tmpdir(), `quire-canary-${randomBytes(6).toString('hex')}`);
  writeFileSync(path, `${secret}\n`.repeat(4));
  chmodSync(path, 0o644);
  return { path, secret };
}

/** A pino logger that keeps every line, to look for leaks in the service's log. */
export function capturedLog(): { log: pino.Logger; lines: string[] } {
  const lines: string[] = [];
  const stream = new Writable({
    write(chunk, _encoding, done) {
      lines.push(String(chunk));
      done();
    },
  });
  return { log: pino({ level: 'debug' }, stream), lines };
}

/** Every file under `dir` (the data dir: database, blobs, stored PDFs) as bytes. */
function filesUnder(dir: string): Buffer[] {
  const out: Buffer[] = [];
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) out.push(...filesUnder(path));
    else if (entry.isFile() && statSync(path).size < 256 * 1024 * 1024) out.push(readFileSync(path));
  }
  return out;
}

/** The canary's secret appears in no response body, log line or file of the data dir. */
export function assertNoLeak(canary: Canary, where: { body?: string; lines?: string[]; dataDir?: string }): void {
  if (where.body !== undefined) assert.ok(!where.body.includes(canary.secret), 'the canary is not in the response');
  for (const line of where.lines ?? []) assert.ok(!line.includes(canary.secret), 'the canary is not in the log');
  if (where.dataDir) {
    for (const data of filesUnder(where.dataDir)) assert.ok(!data.includes(canary.secret), 'the canary is in no stored file');
  }
}

/** A lualatex document that runs `lua` (written to a file first, so TeX does not expand it). */
export function luaDocument(lua: string, body = 'Hello.'): string {
  return `\\begin{filecontents*}[overwrite]{attack.lua}
${lua}
\\end{filecontents*}
\\documentclass{article}
\\begin{document}
\\directlua{dofile("attack.lua")}
${body}
\\end{document}
`;
}

/** Lua that runs `code` after TeX has finished the PDF and the log (the stop_run callback). */
export function afterRun(code: string): string {
  return `luatexbase.add_to_callback("stop_run", function()
${code}
end, "attack")`;
}
