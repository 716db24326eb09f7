// Which helper programs a TeX job needs between passes, decided the way latexmk decides:
// from the transcript, the .fls recorder and file hashes. bibtex/biber for bibliographies,
// makeindex for every index file the job wrote (makeidx, imakeidx, index, splitidx),
// the makeindex calls makeglossaries would make (read from the .aux), and nomencl's
// makeindex. Every call is ours (fixed program, fixed options); the document only chooses
// file names TeX itself wrote and a handful of whitelisted style options.
import { createHash } from 'node:crypto';

/** Reads a workspace file by relative name (null when absent); the runner injects its safe reader. */
export type ReadFile = (name: string) => Promise<Buffer | null>;

export interface Helper {
  /** Stable identity across passes (one per input file). */
  id: string;
  /** Program, for messages and verdicts. */
  tool: 'bibtex' | 'biber' | 'makeindex' | 'splitindex' | 'xindy';
  argv: string[];
  /** Files the helper writes that the next pass reads: a change means another pass. */
  outputs: string[];
  /** Hash of what the helper reads: it runs again only when this changes. */
  key: string;
  /** Where the helper writes its own transcript, if it has one. */
  transcript?: string;
}

export interface HelperVerdict {
  /** The document cannot be delivered: the text joins the log for the diagnosis. */
  fatal?: string;
  /** Problems reported but not blocking delivery (tool errors with a usable output). */
  problems: string[];
  /** Bibliography databases the document names that are not there (citations print as [?], as with latexmk). */
  missing?: string[];
}

/**
 * makeindex under openin_any=p refuses the style files kpathsea finds (absolute paths in the
 * TeX tree). Every name we pass it is relative and plain, and the sandbox shows only the TeX
 * tree and the workspace, so the restricted mode (no dot files) is enough.
 */
const MAKEINDEX = ['env', 'openin_any=r', 'makeindex'];

function sha(data: Buffer | string): string {
  return createHash('sha256').update(data).digest('hex');
}

/** Workspace files the pass wrote, from the recorder (relative names, no `./`). */
export function recordedOutputs(fls: string): string[] {
  const outputs = new Set<string>();
  for (const line of fls.split('\n')) {
    const match = /^OUTPUT (.+)$/.exec(line);
    if (!match || match[1]!.startsWith('/')) continue;
    outputs.add(match[1]!.replace(/^\.\//, ''));
  }
  return [...outputs];
}

/**
 * A name TeX wrote inside the workspace that is safe to hand to a helper as an argument:
 * relative, one folder at most, and never starting with "-" (it would read as an option).
 */
function plainName(name: string): boolean {
  return /^(?:[A-Za-z0-9_][A-Za-z0-9._-]*\/)?[A-Za-z0-9_][A-Za-z0-9._-]*$/.test(name) && !name.includes('..');
}

function stem(name: string): string {
  return name.replace(/\.[^./]*$/, '');
}

/** makeindex options a package may ask for: a style file, letter ordering, German, compressing blanks. */
function makeindexOptions(text: string): string[] | null {
  const words = text.trim().split(/\s+/).filter(Boolean);
  const options: string[] = [];
  for (let i = 0; i < words.length; i++) {
    const word = words[i]!;
    if (word === '-s' && words[i + 1] && plainName(words[i + 1]!)) options.push('-s', words[++i]!);
    else if (['-l', '-g', '-c', '-q', '-r'].includes(word)) options.push(word);
    else return null;
  }
  return options;
}

export interface PlanInput {
  read: ReadFile;
  /** main.log of the pass just run. */
  log: string;
  /** main.fls of the pass just run. */
  fls: string;
  /** The job's own sources (main.tex and project files), to find index.sty's \newindex. */
  sources: string[];
  /** Key of each helper's last run. */
  done: Map<string, string>;
}

/** Helpers to run now: each whose input exists and changed since it last ran. */
export async function planHelpers(main: string, input: PlanInput): Promise<Helper[]> {
  const { read, log, fls } = input;
  const outputs = recordedOutputs(fls);
  const written = new Set(outputs);
  const candidates: Helper[] = [];

  // Bibliographies: biber when biblatex wrote a control file, else bibtex for each .aux with \bibdata.
  const bcf = written.has(`${main}.bcf`) ? await read(`${main}.bcf`) : null;
  if (bcf) {
    // --nodieonerror: a bad entry costs that entry, not the whole bibliography (biber then
    // still writes its .bbl; the error is reported as a warning).
    candidates.push({
      id: 'biber',
      tool: 'biber',
      argv: ['biber', '--nolog', '--nodieonerror', main],
      outputs: [`${main}.bbl`],
      key: sha(bcf),
    });
  } else {
    const auxes = outputs.filter((name) => name.endsWith('.aux'));
    const citations: string[] = [];
    const withData: string[] = [];
    for (const name of auxes) {
      const aux = (await read(name))?.toString('utf8') ?? '';
      citations.push(...aux.split('\n').filter((l) => /^\\(citation|bibdata|bibstyle)\{/.test(l)));
      if (/^\\bibdata\{/m.test(aux) && plainName(name)) withData.push(name);
    }
    for (const name of withData) {
      // The key covers every .aux: \include'd chapters hold their own \citation lines.
      candidates.push({
        id: `bibtex:${name}`,
        tool: 'bibtex',
        argv: ['bibtex', stem(name)],
        outputs: [`${stem(name)}.bbl`],
        key: sha(`${name}\n${citations.join('\n')}`),
        transcript: `${stem(name)}.blg`,
      });
    }
  }

  // Indexes. splitidx without its `split` option writes every index into main.idx, tagged:
  // splitindex cuts it into main-<tag>.idx and runs makeindex on each.
  const splitting = new RegExp(`^Using splitted index at ${main}\\.idx`, 'm').test(log);
  const imakeidx = imakeidxCalls(log);
  const custom = newIndexExtensions(input.sources);
  for (const name of outputs) {
    if (!plainName(name)) continue;
    const ext = name.slice(name.lastIndexOf('.') + 1);
    if (ext === 'idx' && name === `${main}.idx` && splitting) {
      candidates.push({ id: `splitindex:${name}`, tool: 'splitindex', argv: ['env', 'openin_any=r', 'splitindex', '-m', 'makeindex', name], outputs: [], key: '' });
      continue;
    }
    let out: string | undefined;
    if (ext === 'idx') out = `${stem(name)}.ind`;
    else if (stem(name) === main && custom.has(ext)) out = `${main}.${custom.get(ext)}`;
    if (!out) continue;
    const options = imakeidx.get(name) ?? [];
    candidates.push({
      id: `makeindex:${name}`,
      tool: 'makeindex',
      argv: [...MAKEINDEX, ...options, '-t', `${stem(name)}.ilg`, '-o', out, name],
      outputs: [out],
      key: '',
      transcript: `${stem(name)}.ilg`,
    });
  }

  // Glossaries: the calls makeglossaries makes, from the .aux (\@newglossary, \@istfilename, \@glsorder).
  const aux = (await read(`${main}.aux`))?.toString('utf8') ?? '';
  const ist = /^\\@istfilename\{([^}]*)\}/m.exec(aux)?.[1];
  const letterOrder = /^\\@glsorder\{letter\}/m.test(aux);
  for (const m of aux.matchAll(/^\\@newglossary\{([^}]*)\}\{([^}]*)\}\{([^}]*)\}\{([^}]*)\}/gm)) {
    const [, , logExt, outExt, inExt] = m;
    const source = `${main}.${inExt}`;
    if (!written.has(source) || !plainName(source) || !ist || !plainName(ist)) continue;
    if (ist.endsWith('.xdy')) {
      candidates.push({
        id: `xindy:${source}`,
        tool: 'xindy',
        argv: ['xindy', '-L', 'english', '-C', 'utf8', '-I', 'xindy', '-M', stem(ist), '-t', `${main}.${logExt}`, '-o', `${main}.${outExt}`, source],
        outputs: [`${main}.${outExt}`],
        key: '',
      });
      continue;
    }
    candidates.push({
      id: `makeindex:${source}`,
      tool: 'makeindex',
      argv: [...MAKEINDEX, ...(letterOrder ? ['-l'] : []), '-s', ist, '-t', `${main}.${logExt}`, '-o', `${main}.${outExt}`, source],
      outputs: [`${main}.${outExt}`],
      key: '',
      transcript: `${main}.${logExt}`,
    });
  }

  // nomencl.
  if (written.has(`${main}.nlo`)) {
    candidates.push({
      id: `makeindex:${main}.nlo`,
      tool: 'makeindex',
      argv: [...MAKEINDEX, '-s', 'nomencl.ist', '-t', `${main}.nlg`, '-o', `${main}.nls`, `${main}.nlo`],
      outputs: [`${main}.nls`],
      key: '',
      transcript: `${main}.nlg`,
    });
  }

  const due: Helper[] = [];
  for (const helper of candidates) {
    if (helper.tool !== 'biber' && helper.tool !== 'bibtex') {
      // Index-like helpers: keyed by their input file (the last argument) and their options.
      const data = await read(helper.argv.at(-1)!);
      if (!data) continue;
      helper.key = sha(Buffer.concat([Buffer.from(helper.argv.join('\0')), data]));
    }
    if (input.done.get(helper.id) === helper.key) continue;
    input.done.set(helper.id, helper.key);
    due.push(helper);
  }
  return due;
}

/** imakeidx without shell escape names the call it wanted: "Remember to run ... after calling `makeindex -s x.ist name.idx'". */
function imakeidxCalls(log: string): Map<string, string[]> {
  const calls = new Map<string, string[]>();
  for (const m of log.matchAll(/`makeindex((?:\s+[^\s'`]+)*?)\s+([A-Za-z0-9_-][A-Za-z0-9._-]*\.idx)'/g)) {
    const options = makeindexOptions(m[1] ?? '');
    if (options) calls.set(m[2]!, options.filter((o) => o !== '-q'));
  }
  return calls;
}

/** index.sty's \newindex{tag}{ext}{outext}{title}: the job writes \jobname.ext and reads \jobname.outext. */
function newIndexExtensions(sources: string[]): Map<string, string> {
  const map = new Map<string, string>();
  for (const text of sources) {
    for (const m of text.matchAll(/\\newindex(?:\[[^\]]*\])?\*?\s*\{[^}]*\}\s*\{([A-Za-z0-9]+)\}\s*\{([A-Za-z0-9]+)\}/g)) {
      map.set(m[1]!, m[2]!);
    }
  }
  map.set('idx', 'ind');
  return map;
}

/**
 * What a helper's exit means. bibtex exits 1 on warnings and 2 on errors, biber 2 on
 * errors: either way a written .bbl is used (latexmk -f does the same) and the errors
 * become warnings. A database that is not there is a warning too, as TeX and latexmk treat
 * it (the citations print as [?]): the next pass decides whether there is a PDF. A failing
 * bib tool that wrote no .bbl for any other reason is fatal. makeindex, splitindex and xindy
 * problems are never fatal (the index is then incomplete).
 */
export async function judgeHelper(helper: Helper, result: { code: number; output: string }, read: ReadFile): Promise<HelperVerdict> {
  const transcript = helper.transcript ? ((await read(helper.transcript))?.toString('utf8') ?? '') : '';
  const text = `${result.output}\n${transcript}`;
  if (helper.tool === 'biber' || helper.tool === 'bibtex') {
    const missing = [...text.matchAll(/ERROR - Cannot find '([^']+)'|I couldn't open database file (\S+)/g)].map((m) => databaseName(m[1] ?? m[2]!));
    const bbl = await read(helper.outputs[0]!);
    const failed = helper.tool === 'bibtex' ? result.code > 1 : result.code !== 0;
    if (missing.length > 0) return { problems: [], missing: [...new Set(missing)] };
    if (failed && !bbl) return { fatal: `${helper.tool} failed:\n${helper.tool === 'bibtex' && transcript ? transcript : result.output}`, problems: [] };
    return { problems: failed ? bibliographyErrors(helper.tool, text) : [] };
  }
  return { problems: [] };
}

/** The database file a bib tool named ("refs" or "refs.bib"), as the project names it. */
function databaseName(named: string): string {
  return named.endsWith('.bib') ? named : `${named}.bib`;
}

/** The error lines of a bibtex/biber run, one per error (at most 10). */
function bibliographyErrors(tool: 'bibtex' | 'biber', text: string): string[] {
  const lines = text.split('\n');
  const errors: string[] = [];
  if (tool === 'biber') {
    for (const line of lines) {
      const m = /ERROR - (.+)$/.exec(line);
      if (m) errors.push(m[1]!.replace(/\/tmp\/biber_tmp_\w+\/\w+\.utf8/g, 'the .bib file').trim());
    }
  } else {
    lines.forEach((line, i) => {
      if (/---line \d+ of file /.test(line)) errors.push(`${lines[i - 1]?.trim() ?? ''} ${line.trim()}`.trim());
      else if (/^I (was expecting|couldn't|found no)/.test(line)) errors.push(line.trim());
    });
  }
  const unique = [...new Set(errors.filter(Boolean))];
  return unique.length > 0 ? unique.slice(0, 10) : [`${tool} reported errors (exit status) but wrote the bibliography.`];
}
