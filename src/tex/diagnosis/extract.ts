// Reads the source of a package, class or helper file and lists the document-level commands
// and environments it defines, the packages and class it loads and the files it inputs.
// A definition at brace depth 0 runs when the file is loaded ("sure"); one inside braces may
// sit in an option, a hook or another macro's body, so it is kept but marked unsure.

export interface Definitions {
  /** Command name (no backslash) → defined at top level. */
  commands: Map<string, boolean>;
  /** Environment name → defined at top level. */
  environments: Map<string, boolean>;
  /** Packages named by \RequirePackage / \usepackage. */
  requires: string[];
  /** Class named by \LoadClass. */
  loadsClass?: string;
  /** Files named by \input and friends, as written (may lack the extension). */
  inputs: string[];
}

const COMMAND_DEFINERS = [
  'newcommand', 'renewcommand', 'providecommand', 'DeclareRobustCommand', 'NewDocumentCommand', 'RenewDocumentCommand',
  'ProvideDocumentCommand', 'DeclareDocumentCommand', 'NewExpandableDocumentCommand', 'RenewExpandableDocumentCommand',
  'ProvideExpandableDocumentCommand', 'DeclareExpandableDocumentCommand', 'NewCommandCopy', 'DeclareCommandCopy',
  'DeclareMathOperator', 'newrobustcmd', 'renewrobustcmd', 'providerobustcmd', 'DeclareTextCommand', 'DeclareTextSymbol',
  'DeclareTextAccent', 'DeclareTextCommandDefault', 'DeclareTextSymbolDefault', 'DeclareMathSymbol', 'DeclareMathAccent',
  'DeclareMathDelimiter', 'DeclareMathRadical', 'DeclareMathAlphabet', 'DeclareSymbolFontAlphabet', 'DeclareTextFontCommand',
  'DeclareOldFontCommand', 'DeclarePairedDelimiter', 'DeclarePairedDelimiterX', 'DeclarePairedDelimiterXPP', 'newlength',
  'newsavebox', 'newtoks', 'newdimen', 'newskip', 'newcount', 'newbox', 'newmuskip', 'newread', 'newwrite', 'newcommandx',
  'renewcommandx', 'providecommandx', 'DeclareRobustCommandx', 'newrobustcommand',
];

const ENVIRONMENT_DEFINERS = [
  'newenvironment', 'renewenvironment', 'provideenvironment', 'NewDocumentEnvironment', 'RenewDocumentEnvironment',
  'ProvideDocumentEnvironment', 'DeclareDocumentEnvironment', 'NewEnviron', 'RenewEnviron', 'newtheorem', 'newfloat',
  'DeclareFloatingEnvironment', 'newtcolorbox', 'newtcblisting', 'lstnewenvironment', 'DefineVerbatimEnvironment',
  'newmdenv', 'newenvironmentx', 'renewenvironmentx',
];

/** A definer may be a package's own wrapper, e.g. amsmath's \ams@newcommand. */
const COMMAND = new RegExp(
  String.raw`\\(?:[A-Za-z]*@)?(?:${COMMAND_DEFINERS.join('|')})(?![A-Za-z@])\*?\s*(?:\{\s*\\([A-Za-z@]+)\s*\}|\\([A-Za-z@]+))` +
    String.raw`|\\(?:(?:global|long|protected|outer)\s*\\)*(?:[gex]?def|let|chardef|mathchardef|countdef|dimendef|skipdef|toksdef|font)(?![A-Za-z@])\s*\\([A-Za-z@]+)` +
    String.raw`|\\cs_(?:new|gset|set)(?:_protected)?(?:_nopar)?(?::Np[xen]|_eq:NN|_eq:Nc)\s*\\([A-Za-z@_:]+)` +
    String.raw`|\\newif\s*\\if([A-Za-z@]+)` +
    String.raw`|\\(?:newcounter|NewCounter)\s*\{([A-Za-z]+)\}`,
  'g',
);
const ENVIRONMENT = new RegExp(
  String.raw`\\(?:[A-Za-z]*@)?(?:${ENVIRONMENT_DEFINERS.join('|')})(?![A-Za-z@])\*?\s*(?:\[[^\]]*\]\s*)?\{\s*([A-Za-z*-]+)\s*\}`,
  'g',
);
const OWN_DEFINER = /\\[A-Za-z]*@[A-Za-z@]*(?:[Dd]ef|[Nn]ew|Declare)[A-Za-z@]*\s*\{\s*\\([A-Za-z]+)\s*\}(?:\s*\{\s*\\([A-Za-z]+)\s*\})?/g;
// Not after \string: `\string\usepackage{bibunits}` is advice in an error message (jurabib), not a load.
const REQUIRE = /(?<!\\string\s*)\\(?:RequirePackage|usepackage|RequirePackageWithOptions)\s*(?:\[[^\]]*\]\s*)?\{([^}]+)\}/g;
const LOAD_CLASS = /\\LoadClass(?:WithOptions)?\s*(?:\[[^\]]*\]\s*)?\{([^}]+)\}/;
const INPUT = /\\(?:input|@input|@@input|InputIfFileExists|file_input:n|file_if_exist_input:n|@obsoletefile\{[^}]*\})\s*\{?\s*([A-Za-z0-9][A-Za-z0-9._-]*)/g;

/** Names \def and \let appear before without defining them (\expandafter\def\csname ...), and scratch macros. */
const NOT_DEFINED = new Set(['csname', 'expandafter', 'noexpand', 'do', 'next', 'protect', 'relax', 'aftergroup', 'string', 'number', 'global', 'long', 'the', 'reserved', 'tempa', 'tempb', 'x', 'y', 'z', 'a', 'b', 'c', 'i', 'j', 'n']);

/** The text without comments: a % not escaped by a backslash ends the line. */
export function stripComments(text: string): string {
  // One pass: a % after an even run of backslashes starts a comment. (A pattern for that ran
  // the run again from each of its backslashes, quadratic in a line of backslashes.)
  const kept: string[] = [];
  let from = 0;
  let backslashes = 0;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c === 92) {
      backslashes++;
      continue;
    }
    if (c === 37 && backslashes % 2 === 0) {
      kept.push(text.slice(from, i));
      const end = text.indexOf('\n', i);
      from = end === -1 ? text.length : end;
      i = from - 1;
    }
    backslashes = 0;
  }
  kept.push(text.slice(from));
  return kept.join('');
}

export function extractDefinitions(raw: string): Definitions {
  const text = stripComments(raw);
  const depthAt = depthReader(text);
  const commands = new Map<string, boolean>();
  const environments = new Map<string, boolean>();
  const add = (map: Map<string, boolean>, name: string, sure: boolean) => {
    if (!name || /[@_:]/.test(name) || NOT_DEFINED.has(name)) return;
    map.set(name, (map.get(name) ?? false) || sure);
  };
  for (const m of text.matchAll(COMMAND)) {
    const sure = depthAt(m.index) === 0;
    // \let\x\relax (or \@undefined) makes room for a definition elsewhere; it defines nothing.
    if (m[3] !== undefined && /\\let\s*\\[A-Za-z@]+\s*=?\s*\\(relax|@undefined|undefined)(?![A-Za-z@])/.test(m[0] + text.slice(m.index + m[0].length, m.index + m[0].length + 16))) continue;
    if (m[5] !== undefined) {
      for (const name of [`if${m[5]}`, `${m[5]}true`, `${m[5]}false`]) add(commands, name, sure);
    } else if (m[6] !== undefined) add(commands, `the${m[6]}`, sure);
    else add(commands, m[1] ?? m[2] ?? m[3] ?? m[4] ?? '', sure);
  }
  for (const m of text.matchAll(ENVIRONMENT)) add(environments, m[1] ?? '', depthAt(m.index) === 0);
  // A package's own defining macro (armtex's \ArmTeX@OrthoFontDef{\arbfseries}{\armbf}): what it
  // defines is a guess, so those names stay unsure and a probe decides.
  for (const m of text.matchAll(OWN_DEFINER)) {
    for (const name of [m[1], m[2]]) if (name && !commands.has(name)) add(commands, name, false);
  }
  // A plain-TeX environment: \foo and \endfoo both defined.
  for (const [name, sure] of commands) {
    if (!name.startsWith('end') || name.length < 4) continue;
    const begin = name.slice(3);
    if (commands.has(begin)) add(environments, begin, sure && (commands.get(begin) ?? false));
  }
  const requires: string[] = [];
  for (const m of text.matchAll(REQUIRE)) {
    for (const name of (m[1] ?? '').split(',')) {
      const clean = name.trim();
      if (/^[A-Za-z0-9][A-Za-z0-9._-]*$/.test(clean) && !requires.includes(clean)) requires.push(clean);
    }
  }
  const inputs = [...new Set([...text.matchAll(INPUT)].map((m) => m[1] ?? '').filter((f) => f.length > 1))];
  const loadsClass = LOAD_CLASS.exec(text)?.[1]?.trim();
  return { commands, environments, requires, inputs, ...(loadsClass ? { loadsClass } : {}) };
}

/** Brace depth at increasing offsets, counted once through the text. */
function depthReader(text: string): (offset: number) => number {
  let at = 0;
  let depth = 0;
  return (offset: number) => {
    for (; at < offset; at++) {
      const ch = text.charCodeAt(at);
      if (ch === 92 /* \ */) at++;
      else if (ch === 123 /* { */) depth++;
      else if (ch === 125 /* } */ && depth > 0) depth--;
    }
    return depth;
  };
}
