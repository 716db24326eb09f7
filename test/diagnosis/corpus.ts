// The broken-document corpus (test/fixtures/broken) compiled for real through the TeX runner,
// plus an "agent" that applies a diagnosis literally, the way a caller would.
import { readFileSync } from 'node:fs';
import { mkdir } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Compiler } from '../../src/quota/plans.js';
import { prepareLuaCache } from '../../src/tex/caches/luacache.js';
import type { TexResult } from '../../src/tex/job.js';
import { TexRunner } from '../../src/tex/runner.js';
import { probeSandbox } from '../../src/tex/sandbox/sandbox.js';
import type { Diagnosis } from '../../src/tex/diagnosis/index.js';
import { defaultImageRoot } from '../../src/tex/image/default.js';

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

/**
 * The real runner, in the bubblewrap sandbox when this machine can run it (as in production),
 * on `image` (a TeX Live year's; default: the default year's, as the service's).
 */
export async function corpusRunner(image?: { root: string; year: string }): Promise<TexRunner> {
  const root = join(tmpdir(), 'quire-diagnosis-test', ...(image ? [image.year] : []));
  const tex = image?.root ?? defaultImageRoot();
  await mkdir(root, { recursive: true });
  return new TexRunner({
    workRoot: join(root, 'jobs'),
    isolate: probeSandbox(undefined, tex) === null,
    warm: false,
    root: tex,
    luaCache: () => prepareLuaCache(root, tex),
  });
}

/** `files`: the project's other files, as a caller sends them (the diagnosis bench's real projects). */
export function compile(runner: TexRunner, source: string, compiler: Compiler, files?: ReadonlyArray<{ name: string; data: Buffer }>): Promise<TexResult> {
  return runner.run({ source, compiler, timeoutMs: 60_000, maxFileBytes: 64 * 1024 * 1024, ...(files ? { files } : {}) });
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
  const option = /change its \\usepackage on line (\d+) to (\\usepackage(?:\[[^\]]*\])?\{[^}]+\})/.exec(fix);
  if (option?.[1] && option[2]) {
    const lines = out.split('\n');
    const at = Number(option[1]) - 1;
    lines[at] = (lines[at] ?? '').replace(/\\usepackage(\[[^\]]*\])?\{[^}]+\}/, option[2]);
    return { source: lines.join('\n'), engine: compiler };
  }
  const replaceChar = /Replace (\S+) \(U\+[0-9A-F]+\)(?: on line \d+)? with (\\ensuremath\{.*?\}\}?)(?=,| and |$)/.exec(fix);
  if (replaceChar?.[1] && replaceChar[2]) out = out.split(replaceChar[1]).join(replaceChar[2]);
  const adds = [...fix.matchAll(/(\\usepackage(?:\[[^\]]*\])?\{[^}]+\})/g)].map((m) => m[1]);
  const line = adds.length > 0 ? adds.join('\n') : d.suggested_package ? `\\usepackage{${d.suggested_package}}` : undefined;
  const above = /above line (\d+)/.exec(fix)?.[1];
  if (line && above) {
    const lines = out.split('\n');
    lines.splice(Number(above) - 1, 0, line);
    out = lines.join('\n');
  } else if (line) out = out.replace(/\\begin\{document\}/, `${line}\n\\begin{document}`);
  return { source: out, engine: compiler };
}
