// The broken-document corpus (test/fixtures/broken) compiled for real through the TeX runner,
// plus an "agent" that applies a diagnosis literally, the way a caller would.
import { readFileSync } from 'node:fs';
import { mkdir } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Compiler } from '../../src/quota/plans.js';
import { prepareLuaCache } from '../../src/tex/luacache.js';
import { TexRunner, type TexResult } from '../../src/tex/runner.js';
import type { Diagnosis } from '../../src/tex/diagnosis/index.js';

export const CORPUS_DIR = new URL('../fixtures/broken/', import.meta.url).pathname;

export interface Case {
  file: string;
  engine: Compiler;
  /** Expected error_class; null = no diagnosis may be given. */
  class: string | null;
  symbol: string | null;
  line: number | null;
  package: string | null;
  /** `missingCharacters`: the engine makes a PDF and the glyph check must find the loss. */
  check?: 'missingCharacters';
}

export function loadCorpus(): Array<Case & { source: string }> {
  const manifest = JSON.parse(readFileSync(join(CORPUS_DIR, 'manifest.json'), 'utf8')) as Case[];
  return manifest.map((c) => ({ ...c, source: readFileSync(join(CORPUS_DIR, c.file), 'utf8') }));
}

/** The real runner, outside the sandbox (same engine flags and environment). */
export async function corpusRunner(): Promise<TexRunner> {
  const root = join(tmpdir(), 'quire-diagnosis-test');
  await mkdir(root, { recursive: true });
  return new TexRunner({ workRoot: join(root, 'jobs'), isolate: false, luaCache: () => prepareLuaCache(root) });
}

export function compile(runner: TexRunner, source: string, compiler: Compiler): Promise<TexResult> {
  return runner.run({ source, compiler, timeoutMs: 60_000, maxFileBytes: 64 * 1024 * 1024 });
}

/** Runs `work` over `items` with at most `limit` at a time, keeping order. */
export async function pool<T, R>(items: T[], limit: number, work: (item: T) => Promise<R>): Promise<R[]> {
  const results: R[] = new Array(items.length);
  let next = 0;
  const lanes = Array.from({ length: limit }, async () => {
    while (next < items.length) {
      const i = next++;
      results[i] = await work(items[i] as T);
    }
  });
  await Promise.all(lanes);
  return results;
}

/**
 * Applies a diagnosis the way an agent reading only the diagnosis would: a compiler switch,
 * a package swap, a character replacement, then any \usepackage line the fix names.
 */
export function applyFix(source: string, engine: Compiler, d: Diagnosis): { source: string; engine: Compiler } {
  let out = source;
  let compiler = engine;
  const fix = d.suggested_fix;
  const engineSwitch = /set "compiler" to "(\w+)"/.exec(fix) ?? /[Cc]ompile with (xelatex|lualatex)/.exec(fix);
  if (engineSwitch?.[1]) compiler = engineSwitch[1] as Compiler;
  const swap = /(?:Replace|Change) \\usepackage\{([^}]+)\}.*? (?:with|to) (\\usepackage(?:\[[^\]]*\])?\{[^}]+\})/.exec(fix);
  if (swap?.[1] && swap[2]) {
    const name = swap[1];
    const target = /\{([^}]+)\}$/.exec(swap[2])?.[1] ?? '';
    const lines = out.split('\n').map((l) => {
      const m = /\\usepackage(\[[^\]]*\])?\{([^}]*)\}/.exec(l);
      const names = m?.[2]?.split(',').map((n) => n.trim()) ?? [];
      if (!m || !names.includes(name)) return l;
      const kept = names.filter((n) => n !== name);
      if (kept.length === 0) return l.replace(m[0], `\\usepackage${m[1] ?? ''}{${target}}`);
      return `${l.replace(m[0], `\\usepackage${m[1] ?? ''}{${kept.join(',')}}`)}\n\\usepackage{${target}}`;
    });
    return { source: lines.join('\n'), engine: compiler };
  }
  const replaceChar = /Replace (\S+) \(U\+[0-9A-F]+\)(?: on line \d+)? with (\\ensuremath\{.*?\}\}?)(?=,| and |$)/.exec(fix);
  if (replaceChar?.[1] && replaceChar[2]) out = out.split(replaceChar[1]).join(replaceChar[2]);
  const add = /(\\usepackage(?:\[[^\]]*\])?\{[^}]+\})/.exec(fix);
  const line = add?.[1] ?? (d.suggested_package ? `\\usepackage{${d.suggested_package}}` : undefined);
  if (line) out = out.replace(/\\begin\{document\}/, `${line}\n\\begin{document}`);
  return { source: out, engine: compiler };
}
