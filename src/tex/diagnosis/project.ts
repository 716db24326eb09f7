// The project's other files as the diagnosis sees them (issue 39): a caller sends main.tex
// with its \input files, classes and packages, and an error may sit in one of them. The
// diagnosis reads the file the log names, knows the classes and packages the project brings
// (the index holds only installed ones), and reads the document as TeX does, its \input files
// pasted in. Every read is bounded: the files are the caller's.
import { extractDefinitions, stripComments } from './extract.js';

/** What the project's own classes and packages define and load (\LoadClass as `name.cls`). */
export interface ProjectDefinitions {
  commands: Set<string>;
  environments: Set<string>;
  requires: Set<string>;
}

export interface ProjectFile {
  name: string;
  data: Buffer;
}

/** A file larger than this is not read (a .tex or .sty of a real project is far smaller). */
const MAX_FILE_BYTES = 512 * 1024;
/** The files whose names are considered, at most. */
const MAX_FILES = 500;
/** Text read in all for definitions and the expanded document. */
const MAX_TOTAL_BYTES = 2 * 1024 * 1024;
/** \input nesting followed. */
const MAX_DEPTH = 3;

const TEXT = /\.(tex|sty|cls|def|cfg|clo|ltx)$/i;
/** \input{x}, \include{x}, \subfile{x}, \import{dir/}{x} (and \subimport), as written. */
const INCLUDE = /\\(?:input|include|subfile|(?:sub)?import\s*\{([^}]*)\})\s*\{\s*([^}\s]+)\s*\}/g;

export class Project {
  private readonly texts = new Map<string, Buffer>();
  /** Names of the classes and packages the project brings (.cls, .sty at its top level). */
  readonly classes: readonly string[];
  readonly packages: readonly string[];
  private own?: ProjectDefinitions;
  private budget = MAX_TOTAL_BYTES;
  private readonly decoded = new Map<string, string>();

  constructor(files: readonly ProjectFile[]) {
    for (const f of files.slice(0, MAX_FILES)) if (TEXT.test(f.name) && f.data.length <= MAX_FILE_BYTES) this.texts.set(clean(f.name), f.data);
    const top = [...this.texts.keys()].filter((n) => !n.includes('/'));
    this.classes = top.filter((n) => n.endsWith('.cls')).map((n) => n.slice(0, -4));
    this.packages = top.filter((n) => n.endsWith('.sty')).map((n) => n.slice(0, -4));
  }

  /** The text of a project file by the name TeX logs (`./helpers/macros.tex`), within the read budget. */
  text(name: string): string | undefined {
    const key = clean(name);
    const read = this.decoded.get(key);
    if (read !== undefined) return read;
    const data = this.texts.get(key);
    if (!data || data.length > this.budget) return undefined;
    this.budget -= data.length;
    const text = data.toString('utf8');
    this.decoded.set(key, text);
    return text;
  }

  /** The file TeX finds for an \input argument: the name as written, else with .tex added. */
  resolve(written: string): string | undefined {
    const name = clean(written);
    return this.texts.has(name) ? name : this.texts.has(`${name}.tex`) ? `${name}.tex` : undefined;
  }

  /**
   * What the project's own classes and packages that `document` loads define and load (a
   * project class that loads a project package brings that one's too).
   */
  definitions(document: string): ProjectDefinitions {
    if (this.own) return this.own;
    const own: ProjectDefinitions = { commands: new Set(), environments: new Set(), requires: new Set() };
    const pending = [...loadsOf(stripComments(document))];
    const done = new Set<string>();
    while (pending.length > 0) {
      const name = pending.shift() as string;
      if (done.has(name) || !this.texts.has(name)) continue;
      done.add(name);
      const text = this.text(name);
      if (text === undefined) continue;
      const defs = extractDefinitions(text);
      for (const c of defs.commands.keys()) own.commands.add(c);
      for (const e of defs.environments.keys()) own.environments.add(e);
      for (const r of defs.requires) {
        own.requires.add(r);
        pending.push(`${r}.sty`);
      }
      if (defs.loadsClass) {
        own.requires.add(`${defs.loadsClass}.cls`);
        pending.push(`${defs.loadsClass}.cls`);
      }
    }
    return (this.own = own);
  }

  /**
   * main.tex as TeX reads it: each \input of a project file replaced by the file's text
   * (nested to MAX_DEPTH; comments kept). Packages loaded in an \input preamble count.
   */
  expand(main: string): string {
    let room = MAX_TOTAL_BYTES;
    const paste = (text: string, depth: number): string =>
      depth >= MAX_DEPTH
        ? text
        : text
            .split('\n')
            .map((line) => {
              // Only the line's code: comments stay as they are (a commented-out \usepackage names its package).
              const code = stripComments(line);
              const pasted = code.replace(INCLUDE, (all, dir: string | undefined, name: string) => {
                const file = this.resolve(`${dir ?? ''}${name}`);
                const inner = file === undefined ? undefined : this.text(file);
                // A file pasted many times (or in a loop) stops growing the text past the budget.
                if (inner === undefined || inner.length > room) return all;
                room -= inner.length;
                return `\n${paste(inner, depth + 1)}\n`;
              });
              return pasted + line.slice(code.length);
            })
            .join('\n');
    return this.texts.size === 0 ? main : paste(main, 0);
  }

  /**
   * The 1-based line of main.tex whose \input brings `file` in (directly, or through the
   * files it inputs), so a fix can go above it.
   */
  includedAt(main: string, file: string): number | undefined {
    const target = clean(file);
    const lines = stripComments(main).split('\n');
    for (let i = 0; i < lines.length; i++) {
      for (const m of (lines[i] ?? '').matchAll(INCLUDE)) {
        const name = this.resolve(`${m[1] ?? ''}${m[2] ?? ''}`);
        if (name !== undefined && (name === target || this.reaches(name, target, 1))) return i + 1;
      }
    }
    return undefined;
  }

  private reaches(from: string, target: string, depth: number): boolean {
    if (depth >= MAX_DEPTH) return false;
    const text = this.text(from);
    if (text === undefined) return false;
    for (const m of stripComments(text).matchAll(INCLUDE)) {
      const name = this.resolve(`${m[1] ?? ''}${m[2] ?? ''}`);
      if (name !== undefined && (name === target || this.reaches(name, target, depth + 1))) return true;
    }
    return false;
  }
}

/** The class (`x.cls`) and packages (`y.sty`) a text loads. */
function loadsOf(text: string): string[] {
  const out: string[] = [];
  for (const m of text.matchAll(/\\(documentclass|LoadClass|usepackage|RequirePackage)\s*(?:\[[^\]]{0,500}\]\s*)?\{([^}]{0,500})\}/g)) {
    const ext = m[1] === 'documentclass' || m[1] === 'LoadClass' ? 'cls' : 'sty';
    for (const n of (m[2] ?? '').split(',')) if (n.trim()) out.push(`${n.trim()}.${ext}`);
  }
  return out;
}

function clean(name: string): string {
  return name.replace(/^(\.\/)+/, '');
}
