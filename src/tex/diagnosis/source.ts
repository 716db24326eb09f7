// Looks things up in the submitted main.tex, when the caller passes it, so a diagnosis can
// name the exact line of a \usepackage or of an unclosed argument; TeX's own line for those
// is where it noticed, which is often a later line.

import type { ProjectDefinitions } from './project.js';

/** Where the lines come from when they are not main.tex's: a project file main.tex inputs. */
export interface SourceOrigin {
  /** The whole document as TeX reads it (main.tex with its \input files pasted in). */
  document?: string;
  /** The project file these lines are (`helpers/macros.tex`); absent: main.tex. */
  file?: string;
  /** main.tex's line that inputs that file. */
  includedAt?: number;
  /** main.tex's \begin{document} line. */
  mainBegin?: number;
  /** What the project's own classes and packages define and load. */
  project?: ProjectDefinitions;
}

export class Source {
  private readonly lines: string[];
  private whole?: Source;

  constructor(
    readonly text: string,
    readonly origin: SourceOrigin = {},
  ) {
    this.lines = text.replace(/\r\n?/g, '\n').split('\n').map(withoutComment);
  }

  /** The document as TeX reads it: what it loads and defines (main.tex alone without project files). */
  get document(): string {
    return this.origin.document ?? this.text;
  }

  /** The project file these lines are, when not main.tex. */
  get file(): string | undefined {
    return this.origin.file;
  }

  /**
   * The main.tex line a \usepackage must go above for a name used on `at` of these lines
   * (it is used in the preamble); undefined: anywhere in the preamble.
   */
  placement(at: number | undefined): number | undefined {
    if (this.origin.file === undefined) {
      const begin = this.beginDocument;
      return at !== undefined && begin !== undefined && at < begin ? at : undefined;
    }
    const { includedAt, mainBegin } = this.origin;
    return includedAt !== undefined && mainBegin !== undefined && includedAt < mainBegin ? includedAt : undefined;
  }

  /** The main.tex line a probe compile stops at for `at` of these lines: the \input of the file. */
  mainLine(at: number | undefined): number | undefined {
    return this.origin.file === undefined ? at : this.origin.includedAt;
  }

  /** 1-based line of the first match at or after `from`. */
  find(pattern: RegExp, from = 1): number | undefined {
    for (let i = Math.max(0, from - 1); i < this.lines.length; i++) {
      if (pattern.test(this.lines[i] ?? '')) return i + 1;
    }
    return undefined;
  }

  /** 1-based line of the last match at or before `upTo`. */
  findBack(pattern: RegExp, upTo: number): number | undefined {
    for (let i = Math.min(upTo, this.lines.length) - 1; i >= 0; i--) {
      if (pattern.test(this.lines[i] ?? '')) return i + 1;
    }
    return undefined;
  }

  line(n: number): string {
    return this.lines[n - 1] ?? '';
  }

  get beginDocument(): number | undefined {
    return this.find(/\\begin\s*\{document\}/);
  }

  /** Line of the \usepackage / \RequirePackage that names `name`. */
  usePackageLine(name: string): number | undefined {
    return this.findArgument(LOADS, name, true);
  }

  /**
   * 1-based line of the first `command` (a global pattern whose group 1 is its argument, up to
   * a `}` or the line's end) at or after `from` whose argument holds `name`; with `whole`, not as
   * part of a longer name. Linear in the line: a pattern with the name after `[^}]*` backtracks
   * once per character, each time comparing the name (and both come from the caller).
   */
  findArgument(command: RegExp, name: string, whole: boolean, from = 1): number | undefined {
    if (name === '') return undefined;
    for (let i = Math.max(0, from - 1); i < this.lines.length; i++) {
      for (const m of (this.lines[i] ?? '').matchAll(command)) {
        const argument = m[1] ?? '';
        for (let at = argument.indexOf(name); at !== -1; at = argument.indexOf(name, at + 1)) {
          if (!whole || (!NAME_CHAR.test(argument[at - 1] ?? ' ') && !NAME_CHAR.test(argument[at + name.length] ?? ' '))) return i + 1;
        }
      }
    }
    return undefined;
  }

  /** Every line that loads `name`. */
  usePackageLines(name: string): number[] {
    const found: number[] = [];
    for (let at = this.usePackageLine(name); at !== undefined; at = this.usePackageLineFrom(name, at + 1)) found.push(at);
    return found;
  }

  private usePackageLineFrom(name: string, from: number): number | undefined {
    return this.findArgument(LOADS, name, true, from);
  }

  /** The document loads `name` (in main.tex, or in a file it inputs). */
  loads(name: string): boolean {
    if (this.origin.document === undefined) return this.usePackageLine(name) !== undefined;
    this.whole ??= new Source(this.origin.document);
    return this.whole.usePackageLine(name) !== undefined;
  }

  /**
   * Stack of environments still open at the start of `line` (outermost first); with `upTo`,
   * also those opened on `line` itself before the first occurrence of `upTo`.
   */
  openEnvironments(line: number, upTo?: string): Array<{ name: string; line: number }> {
    const stack: Array<{ name: string; line: number }> = [];
    const re = /\\(begin|end)\s*\{([^}]+)\}/g;
    const last = Math.min(upTo === undefined ? line - 1 : line, this.lines.length);
    for (let i = 0; i < last; i++) {
      let text = this.lines[i] ?? '';
      if (upTo !== undefined && i === line - 1) text = text.split(upTo)[0] ?? '';
      for (const m of text.matchAll(re)) {
        if (m[1] === 'begin') stack.push({ name: m[2] ?? '', line: i + 1 });
        else if (stack.at(-1)?.name === m[2]) stack.pop();
      }
    }
    return stack;
  }

  /** Last line at or before `upTo` where `text` starts (whitespace-insensitive, may span lines). */
  locate(text: string, upTo = this.lines.length): number | undefined {
    const needle = squash(text);
    if (!needle) return undefined;
    for (let i = Math.min(upTo, this.lines.length) - 1; i >= 0; i--) {
      const own = squash(this.lines[i] ?? '');
      const joined = squash(this.lines.slice(i, i + 4).join(' '));
      const at = joined.indexOf(needle);
      if (at !== -1 && at < own.length) return i + 1;
    }
    return undefined;
  }
}

function squash(text: string): string {
  return text.replace(/\s+/g, ' ').trim();
}

function withoutComment(line: string): string {
  const m = /(^|[^\\])((\\\\)*)%/.exec(line);
  return m ? line.slice(0, m.index + (m[1]?.length ?? 0) + (m[2]?.length ?? 0)) : line;
}

/** \usepackage and \RequirePackage, with their argument (to its `}` or the line's end) as group 1. */
const LOADS = /\\(?:usepackage|RequirePackage)\s*(?:\[[^\]]*\])?\s*\{([^}]*)/g;
const NAME_CHAR = /[\w-]/;
