// One rule per kind of TeX error we recognise with certainty. Each rule reads the first real
// error block and returns a Finding (the Diagnosis plus an agent hint) or nothing.
import type { Compiler } from '../compilers.js';
import { GRAPHICS_EXTENSIONS } from '../graphics.js';
import type { Diagnosis, ErrorClass } from './index.js';
import { commandBefore, lastToken, type ErrorBlock } from './log.js';
import { COMMAND_PACKAGES, ENVIRONMENT_PACKAGES, PACKAGES, PACKAGE_ENGINES, PACKAGE_REPLACEMENTS, type Provider } from './packages.js';
import type { Source } from './source.js';
import { codepointOf, pdflatexAdvice, fontsWithChar, installedFonts } from './unicode.js';
import type { TexCatalog } from './catalog.js';
import { documentProvides, rankCandidates, readDocument, type NameKind } from './candidates.js';
import { closest, KERNEL_COMMANDS, INSTALLED_CLASSES, KERNEL_ENVIRONMENTS, UNINSTALLED_CLASSES } from './names.js';

/** A rule's answer: a Diagnosis (retryable defaults to true) and the hint for the agent. */
export type Finding = Omit<Diagnosis, 'retryable'> & { retryable?: boolean; hint: string; verify?: Verification };

/**
 * A package suggestion taken from the TeX Live index that a probe compile should confirm: the
 * index had several candidates, or the definition sits inside an option or hook.
 */
export interface Verification {
  kind: NameKind;
  /** The name without backslash (command) or the environment name. */
  name: string;
  /** main.tex line where the name is used. */
  line?: number;
  /** Best first; the first is the one suggested until a probe says otherwise. */
  candidates: string[];
  /** False when the index had one sure candidate: no probe needed. */
  needed: boolean;
}

/** A probe's answer for a name: the package that got TeX past it, or null when none did. */
export type Verdicts = ReadonlyMap<string, string | null>;
export const verdictKey = (kind: NameKind, name: string) => `${kind}:${name}`;

export interface RuleContext {
  block: ErrorBlock;
  blocks: ErrorBlock[];
  engine: Compiler;
  source?: Source;
  /** The TeX Live index, once loaded. */
  catalog?: TexCatalog;
  /** Probe results for index suggestions (see Verification). */
  verdicts?: Verdicts;
  /** A probe will check the suggestion (diagnose()): unsure suggestions may be offered. */
  probing?: boolean;
  /** main.tex line TeX reported, when it reported one. */
  line?: number;
}

type Rule = (ctx: RuleContext) => Finding | undefined;

const onLine = (line: number | undefined) => (line === undefined ? '' : ` on line ${line}`);
const usepackage = (pkg: string, options?: string) => `\\usepackage${options ? `[${options}]` : ''}{${pkg}}`;
const PREAMBLE_TEXT = 'to the preamble (after \\documentclass, before \\begin{document})';
const PREAMBLE = PREAMBLE_TEXT;

function otherEngine(engines: readonly Compiler[]): string {
  const names = engines.map((e) => `"${e}"`).join(' or ');
  return `set "compiler" to ${names}`;
}

// ---------------------------------------------------------------- missing files

const missingFile: Rule = ({ block, source, line, engine, catalog: cat }) => {
  const m = /File `([^']+)' not found|Unable to load picture or PDF file '([^']+)'/.exec(block.message);
  const file = m?.[1] ?? m?.[2];
  if (!file) return undefined;
  const dot = file.lastIndexOf('.');
  const ext = dot > 0 && !file.slice(dot).includes('/') ? file.slice(dot + 1).toLowerCase() : '';
  const base = ext ? file.slice(0, dot) : file;

  if (ext === 'cls') {
    const at = source?.find(/\\documentclass/) ?? line;
    const near = UNINSTALLED_CLASSES.includes(base) ? undefined : (closest(base, INSTALLED_CLASSES) ?? (cat ? closest(base, cat.classNames()) : undefined));
    const fix = near
      ? `Change \\documentclass{${base}}${onLine(at)} to \\documentclass{${near}}.`
      : `Change \\documentclass{${base}}${onLine(at)} to an installed class such as article, report, book, beamer, amsart or scrartcl.`;
    return {
      error_class: 'missing_document_class',
      summary: `The document class "${base}" is not installed on this server.`,
      suggested_fix: fix,
      symbol: base,
      line: at,
      hint: fix.replace(/\.$/, ' and compile again.'),
    };
  }

  if (ext === 'sty') {
    const at = source?.usePackageLine(base) ?? line;
    // Well-known names first; then every package installed here (one edit away, and only one).
    const typo = closest(base, PACKAGE_NAMES) ?? (cat ? closest(base, cat.packageNames()) : undefined);
    const replacement = PACKAGE_REPLACEMENTS[base];
    let fix: string;
    let pkg: string | undefined;
    if (replacement) {
      pkg = replacement.package;
      fix = pkg
        ? `Replace \\usepackage{${base}}${onLine(at)} with ${usepackage(pkg)} and ${replacement.change}.`
        : `Remove \\usepackage{${base}}${onLine(at)}: ${replacement.change}.`;
    } else if (typo) {
      pkg = typo;
      fix = `Change \\usepackage{${base}}${onLine(at)} to \\usepackage{${typo}}.`;
    } else {
      fix = `Remove \\usepackage{${base}}${onLine(at)} and the commands that need it; if it is your own package, paste its definitions into the preamble instead.`;
    }
    if (pkg && PACKAGE_ENGINES[pkg] && !PACKAGE_ENGINES[pkg]?.includes(engine)) pkg = undefined;
    return {
      error_class: 'missing_package',
      summary: `The package "${base}" is not installed on this server.`,
      suggested_fix: fix,
      ...(pkg ? { suggested_package: pkg } : {}),
      symbol: base,
      line: at,
      retryable: !(replacement && !replacement.package && /cannot be typeset/.test(replacement.change)),
      hint: fix.replace(/\.$/, '').replace(/:.*$/, '') + ' and compile again.',
    };
  }

  if (ext === '' || (GRAPHICS_EXTENSIONS as readonly string[]).includes(ext)) {
    const at = line ?? source?.find(new RegExp(escape(file)));
    // Asset names are flat (no folders) and simple; graphicx finds `logo.png` for {logo}.
    const valid = /^[A-Za-z0-9_-]+(\.[A-Za-z0-9]+)?$/.test(file) && file.length <= 64;
    const stem = (file.split('/').at(-1) ?? file).replace(/\.[^.]*$/, '').replace(/[^A-Za-z0-9_-]/g, '-').slice(0, 59) || 'image';
    const sendAs = ext ? `${stem}.${ext}` : `${stem}.png`;
    const how = '"assets" (file name → base64) or "use_stored_assets" (a stored asset)';
    let fix: string;
    if (valid && ext) fix = `Send the file "${file}" in ${how}, or remove the line that uses it${onLine(at)}.`;
    else if (valid) fix = `Send the image as "${file}.png" (or .pdf, .jpg) in ${how}; \\includegraphics{${file}} finds it without the extension. Or remove the line that uses it${onLine(at)}.`;
    else fix = `Send the file as "${sendAs}" in ${how} and change the reference${onLine(at)} to {${sendAs}}: asset names cannot contain folders or other characters than letters, digits, _ and -. Or remove the line that uses it.`;
    return {
      error_class: 'missing_asset',
      summary: `The file "${file}" is referenced${onLine(at)} but was not sent with the compile request.`,
      suggested_fix: fix,
      symbol: file,
      line: at,
      hint: valid
        ? `Add "${ext ? file : `${file}.png`}" to "assets" (or "use_stored_assets") in the request, or remove its use${onLine(at)}, and compile again.`
        : `Send the file as "${sendAs}" in "assets", reference it as {${sendAs}}${onLine(at)}, and compile again.`,
    };
  }

  if (['tex', 'bib', 'bst', 'cfg', 'def', 'csv', 'dat', 'txt', 'bbx', 'cbx', 'ltx'].includes(ext)) {
    const at = source?.find(new RegExp(escape(base))) ?? line;
    const fix = `Send "${file}" in "files" (file name → its text), or paste its content into main.tex where it is used${onLine(at)}.`;
    return {
      error_class: 'missing_asset',
      summary: `The file "${file}" does not exist in the compile: only main.tex, the sent files and the assets are there.`,
      suggested_fix: fix,
      symbol: file,
      line: at,
      hint: `Send "${file}" in "files" (or inline its content into main.tex${onLine(at)}) and compile again.`,
    };
  }
  return undefined;
};

// ---------------------------------------------------------------- engine requirements

const ENGINE_MESSAGE = /requires either XeTeX or LuaTeX|Cannot be run with pdf|requires LuaTeX|requires XeTeX|only (supports|works with) (Lua|Xe)|must be (used|run) with (Lua|Xe)|needs? (Lua|Xe)TeX|not supported with (pdf|Xe|Lua)/i;

const engineRequirement: Rule = ({ block, engine, source, line }) => {
  const fromMessage = /(?:Package|Class) ([\w-]+) Error/.exec(block.message)?.[1];
  const fromFile = block.file ? /([\w-]+)\.sty$/.exec(block.file)?.[1] : undefined;
  const pkg = [fromMessage, fromFile].find((p) => p !== undefined && PACKAGE_ENGINES[p] !== undefined);
  const engines = pkg ? PACKAGE_ENGINES[pkg] : undefined;
  if (!pkg || !engines || engines.includes(engine) || !(ENGINE_MESSAGE.test(block.message) || fromFile === pkg)) return undefined;
  const at = source?.usePackageLine(pkg) ?? (block.file && !/main\.tex$/.test(block.file) ? undefined : line);
  const fix = `Compile with ${engines.join(' or ')} instead of ${engine} (${otherEngine(engines)} in the request): the package ${pkg} loaded${onLine(at)} does not work with ${engine}. Or remove \\usepackage{${pkg}} and the commands that need it.`;
  return {
    error_class: 'fatal_error',
    summary: `The package "${pkg}" only works with ${engines.join(' or ')}, not with ${engine}.`,
    suggested_fix: fix,
    symbol: pkg,
    line: at,
    hint: `Set "compiler" to "${engines[0]}" (package ${pkg} needs it) and compile again.`,
  };
};

// ---------------------------------------------------------------- fonts

const fontNotFound: Rule = ({ block, source, line }) => {
  const m = /The font "([^"]+)" cannot be found/.exec(block.message);
  if (!m?.[1]) return undefined;
  const fonts = installedFonts();
  // fontspec may print the name without its spaces (lualatex): report it as the source has it.
  const loose = new RegExp([...m[1].replace(/\s+/g, '')].map(escape).join('\\s*'), 'i');
  const at = source?.find(loose) ?? line;
  const font = (at !== undefined ? loose.exec(source?.line(at) ?? '')?.[0] : undefined) ?? m[1];
  const twin = METRIC_TWINS[font.toLowerCase()];
  const near = twin && fonts.includes(twin) ? twin : closest(font, fonts, { caseInsensitive: true, max: 3 });
  const choices = ['DejaVu Serif', 'DejaVu Sans', 'Liberation Serif', 'Liberation Sans', 'Noto Serif'].filter((f) => fonts.includes(f));
  const fix = near
    ? `Change the font name "${font}"${onLine(at)} to "${near}"${twin ? ' (installed here, with the same letter widths)' : ''}.`
    : `Replace "${font}"${onLine(at)} with a font installed on this server${choices.length ? `, e.g. ${choices.map((f) => `"${f}"`).join(', ')}` : ''}.`;
  return {
    error_class: 'fatal_error',
    summary: `The font "${font}" is not installed on this server.`,
    suggested_fix: fix,
    symbol: font,
    line: at,
    hint: fix.replace(/ \(.*\)\.$/, '.').replace(/\.$/, ' and compile again.'),
  };
};

/** Free fonts with the same metrics as common commercial ones. */
const METRIC_TWINS: Record<string, string> = {
  'times new roman': 'Liberation Serif',
  times: 'Liberation Serif',
  arial: 'Liberation Sans',
  helvetica: 'Liberation Sans',
  'courier new': 'Liberation Mono',
};

// ---------------------------------------------------------------- unicode (pdflatex)

const unicodeCharacter: Rule = ({ block, line }) => {
  const m = /Unicode character (\S+) \(U\+([0-9A-F]+)\)/.exec(block.message);
  if (!m?.[2]) return undefined;
  const char = String.fromCodePoint(parseInt(m[2], 16));
  const cp = codepointOf(char);
  const advice = pdflatexAdvice(char);
  const fonts = fontsWithChar(char.codePointAt(0) ?? 0);
  const where = onLine(line);
  const unicodeEngines = fonts.length
    ? `compile with xelatex or lualatex and \\usepackage{fontspec} plus \\setmainfont{${fonts[0]}} (an installed font that has it)`
    : undefined;
  let fix: string;
  let hint: string;
  if (advice?.usepackage && !advice.replacement) {
    fix = `Add ${advice.usepackage} ${PREAMBLE}; it makes ${char} (${cp}) usable with pdflatex.`;
    hint = `Add ${advice.usepackage} to the preamble and compile again.`;
  } else if (advice?.replacement) {
    const pkg = advice.usepackage ? ` and add ${advice.usepackage} to the preamble` : '';
    fix = `Replace ${char} (${cp})${where} with ${advice.replacement}${pkg}, or declare it once in the preamble with \\DeclareUnicodeCharacter{${m[2]}}{${advice.replacement}}.`;
    hint = `Replace ${char}${where} with ${advice.replacement}${pkg} and compile again.`;
  } else if (unicodeEngines) {
    fix = `pdflatex has no glyph for ${char} (${cp}): ${unicodeEngines}, or remove the character${where}.`;
    hint = `Set "compiler" to "xelatex", add \\usepackage{fontspec} and \\setmainfont{${fonts[0]}} to the preamble, and compile again.`;
  } else {
    fix = `Remove ${char} (${cp})${where}: no font installed on this server has this character, so no compiler here can print it.`;
    hint = `Remove the character ${char} (${cp})${where} and compile again.`;
  }
  return {
    error_class: 'unsupported_unicode',
    summary: `pdflatex cannot typeset the character ${char} (${cp})${where}.`,
    suggested_fix: fix,
    ...(advice?.package ? { suggested_package: advice.package } : {}),
    symbol: cp,
    line,
    retryable: Boolean(advice || unicodeEngines),
    hint,
  };
};

// ---------------------------------------------------------------- input encodings (pdflatex)

/**
 * Text outside the declared 8-bit input encoding: a UTF-8 file read as latin1 (or another
 * inputenc encoding). The log shows raw bytes; the character meant is found on the source
 * line: the first whose UTF-8 bytes include one the 8-bit encodings leave undefined (0x80-0x9F).
 */
const inputEncoding: Rule = ({ block, source, line }) => {
  const m = /Keyboard character used is undefined (?:\(inputenc\) +)?in inputencoding [`']([^']+)'/.exec(block.message);
  if (!m?.[1]) return undefined;
  const encoding = m[1];
  const text = line !== undefined ? (source?.line(line) ?? '') : '';
  const chars = [...text].filter((c) => (c.codePointAt(0) ?? 0) > 0x7f);
  const char = chars.find((c) => [...Buffer.from(c, 'utf8')].some((b) => b >= 0x80 && b <= 0x9f)) ?? chars[0];
  const cp = char ? codepointOf(char) : undefined;
  const what = char ? `the character ${char} (${cp})` : 'a character';
  const at = source?.find(new RegExp(`\\\\usepackage\\s*\\[[^\\]]*${escape(encoding)}[^\\]]*\\]\\s*\\{inputenc\\}`));
  const fix = at !== undefined
    ? `Change \\usepackage[${encoding}]{inputenc} on line ${at} to \\usepackage[utf8]{inputenc} (or remove it: LaTeX reads UTF-8 by default): the file is UTF-8 and ${what}${onLine(line)} does not exist in ${encoding}.`
    : `Declare the input encoding as UTF-8 (\\usepackage[utf8]{inputenc}, LaTeX's default) instead of ${encoding}: ${what}${onLine(line)} does not exist in ${encoding}.`;
  return {
    error_class: 'unsupported_unicode',
    summary: `${what.charAt(0).toUpperCase() + what.slice(1)}${onLine(line)} is not part of the declared input encoding ${encoding}.`,
    suggested_fix: fix,
    ...(cp ? { symbol: cp } : {}),
    line,
    hint: `Switch inputenc from ${encoding} to utf8${at !== undefined ? ` on line ${at}` : ''} and compile again.`,
  };
};

// ---------------------------------------------------------------- font encodings (pdflatex)

/** Commands the default OT1 encoding lacks and T1 has. */
const T1_ONLY = ['guillemetleft', 'guillemetright', 'guillemotleft', 'guillemotright', 'guilsinglleft', 'guilsinglright', 'quotedblbase', 'quotesinglbase', 'textquotedbl', 'th', 'TH', 'dh', 'DH', 'dj', 'DJ', 'ng', 'NG', 'k', 'textogonek', 'textlangle', 'textrangle'];

const encoding: Rule = ({ block, line }) => {
  const m = /^LaTeX Error: Command \\(\S+) unavailable in encoding OT1/.exec(block.message);
  if (!m?.[1] || !T1_ONLY.includes(m[1])) return undefined;
  const lctx = block.context.find((c) => /^l\.\d+/.test(c.read));
  const typed = lctx ? [...lctx.read.replace(/ $/, '')].at(-1) : undefined;
  const fix = `Add \\usepackage[T1]{fontenc} and \\usepackage{lmodern} ${PREAMBLE}: the default OT1 font encoding has no \\${m[1]}, and Latin Modern provides T1 fonts.`;
  const unicode = typed !== undefined && (typed.codePointAt(0) ?? 0) > 0x7f;
  return {
    error_class: unicode ? 'unsupported_unicode' : 'fatal_error',
    summary: unicode
      ? `The character ${typed} (${codepointOf(typed)})${onLine(line)} needs the T1 font encoding.`
      : `\\${m[1]}${onLine(line)} needs the T1 font encoding.`,
    suggested_fix: fix,
    suggested_package: 'fontenc',
    symbol: unicode ? codepointOf(typed) : `\\${m[1]}`,
    line,
    hint: 'Add \\usepackage[T1]{fontenc} and \\usepackage{lmodern} to the preamble and compile again.',
  };
};

// ---------------------------------------------------------------- undefined commands

/** Commands a loaded package defines only inside one environment. */
const ONLY_INSIDE: Record<string, string> = {
  draw: 'tikzpicture', node: 'tikzpicture', fill: 'tikzpicture', filldraw: 'tikzpicture',
  coordinate: 'tikzpicture', clip: 'tikzpicture', shade: 'tikzpicture', shadedraw: 'tikzpicture',
  addplot: 'axis', addlegendentry: 'axis', State: 'algorithmic', Require: 'algorithmic',
  Ensure: 'algorithmic', If: 'algorithmic', For: 'algorithmic', While: 'algorithmic',
  Return: 'algorithmic', tcblower: 'tcolorbox', columnbreak: 'multicols',
};

const undefinedCommand: Rule = (ctx) => {
  const { block, engine, source, line } = ctx;
  if (!/^Undefined control sequence/.test(block.message)) return undefined;
  const top = block.context[0];
  const symbol = top ? lastToken(top.read) : undefined;
  if (!symbol?.startsWith('\\') || symbol.length < 2) return undefined;
  const name = symbol.slice(1);
  // Inside a macro expansion the name is written somewhere else: point at where it is written.
  const written = new RegExp(`\\\\${escape(name)}(?![A-Za-z@])`);
  const at = line !== undefined && source && !written.test(source.line(line)) ? (source.find(written) ?? line) : line;
  const provider = COMMAND_PACKAGES.get(name) ?? (name in ONLY_INSIDE ? { package: ONLY_INSIDE[name] === 'axis' ? 'pgfplots' : ONLY_INSIDE[name] === 'algorithmic' ? 'algpseudocode' : ONLY_INSIDE[name] === 'tikzpicture' ? 'tikz' : 'tcolorbox' } : undefined);
  const summary = `The command ${symbol}${onLine(at)} is not defined.`;

  if (provider?.options && source?.loads(provider.package)) return withOption(provider, symbol, at, source, summary, 'undefined_command');
  if (provider && source?.loads(provider.package)) {
    const env = ONLY_INSIDE[name];
    if (!env) return undefined; // loaded yet undefined: not something we can explain for sure
    const fix = `Move ${symbol}${onLine(at)} inside a \\begin{${env}} ... \\end{${env}} environment: ${provider.package} defines it only there.`;
    return { error_class: 'undefined_command', summary, suggested_fix: fix, symbol, line: at, hint: fix.replace(/:.*$/, ' and compile again.') };
  }
  // The table's choice, unless the index finds a package that also defines more of the
  // document's undefined names (amsrefs' \cites in a document that uses amsrefs throughout).
  // The table knows packages whose names the index cannot read (siunitx's units), so the
  // index must cover at least two more names to overrule it.
  const ranked = provider && !provider.options && !(name in ONLY_INSIDE) && ctx.catalog && source ? rankCandidates(ctx.catalog, name, 'command', { engine, source: source.text, preferred: provider.package }) : [];
  const tableCoverage = ranked.find((c) => c.package === provider?.package)?.coverage ?? 0;
  const outranked = ranked[0] && ranked[0].package !== provider?.package && ranked[0].coverage >= tableCoverage + 2;
  if (provider && !outranked) return withPackage(provider, symbol, at, engine, summary, 'command', source);
  const indexed = fromIndex(ctx, 'command', name, at, provider?.package);
  if (indexed === undefined && provider) return withPackage(provider, symbol, at, engine, summary, 'command', source);
  if (indexed === 'loaded') return undefined;
  if (indexed && indexed !== 'none') return { ...withPackage(indexed.provider, symbol, at, engine, summary, 'command', source), ...(indexed.verify ? { verify: indexed.verify } : {}) };

  const near = closest(name, [...COMMAND_PACKAGES.keys(), ...KERNEL_COMMANDS]);
  const nearPackage = near ? COMMAND_PACKAGES.get(near)?.package : undefined;
  const defineAt = source?.beginDocument;
  const fix = near
    ? `Change ${symbol}${onLine(at)} to \\${near}${nearPackage && !source?.loads(nearPackage) ? ` and add ${usepackage(nearPackage)} to the preamble` : ''}; if you meant a command of your own, define it with \\newcommand{${symbol}}{...} in the preamble.`
    : `Define ${symbol} in the preamble with \\newcommand{${symbol}}{...}${defineAt ? ` (before line ${defineAt})` : ''}, or remove or correct it${onLine(at)}; ${indexed === 'none' ? 'no installed package that defines it got TeX past it in a test compile' : 'no package we know provides it'}.`;
  const hint = near
    ? `Change ${symbol}${onLine(at)} to \\${near} (or define ${symbol} with \\newcommand) and compile again.`
    : `Define ${symbol} with \\newcommand in the preamble or remove it${onLine(at)}, then compile again.`;
  return { error_class: 'undefined_command', summary, suggested_fix: fix, symbol, line: at, hint };
};

function withPackage(provider: Provider, symbol: string, at: number | undefined, engine: Compiler, summary: string, kind: 'command' | 'environment', source?: Source): Finding {
  const line = usepackage(provider.package, provider.options);
  // Used in the preamble itself: the package must be loaded above that line.
  const begin = source?.beginDocument;
  const PREAMBLE = at !== undefined && begin !== undefined && at < begin ? `to the preamble above line ${at}` : PREAMBLE_TEXT;
  const needsEngine = provider.engines && !provider.engines.includes(engine);
  const what = kind === 'command' ? symbol : `the ${symbol} environment`;
  if (needsEngine && provider.engines) {
    const fix = `Add ${line} ${PREAMBLE} and compile with ${provider.engines.join(' or ')} (${otherEngine(provider.engines)} in the request): ${provider.package} provides ${what} and does not work with ${engine}.`;
    return {
      error_class: kind === 'command' ? 'undefined_command' : 'undefined_environment',
      summary: `${summary} It comes from the package ${provider.package}, which needs ${provider.engines.join(' or ')}.`,
      suggested_fix: fix,
      suggested_package: provider.package,
      symbol,
      line: at,
      hint: `Set "compiler" to "${provider.engines[0]}", add ${line} ${PREAMBLE.replace(/ \(.*\)$/, '')} and compile again.`,
    };
  }
  const fix = `Add ${line} ${PREAMBLE}: it provides ${what}.`;
  return {
    error_class: kind === 'command' ? 'undefined_command' : 'undefined_environment',
    summary: `${summary} It is provided by the package ${provider.package}, which the document does not load.`,
    suggested_fix: fix,
    suggested_package: provider.package,
    symbol,
    line: at,
    hint: `Add ${line} ${PREAMBLE.replace(/ \(.*\)$/, '')} and compile again.`,
  };
}

/**
 * The package the TeX Live index proposes for an undefined name, honouring a probe verdict.
 * undefined: the index has no definer (or is not loaded yet); 'loaded': the document already
 * loads a package that defines it, so the cause is something else; 'none': probes showed no
 * candidate gets TeX past it.
 */
function fromIndex(ctx: RuleContext, kind: NameKind, name: string, at: number | undefined, preferred?: string): { provider: Provider; verify?: Verification } | 'loaded' | 'none' | undefined {
  const { catalog: cat, source, engine, verdicts } = ctx;
  if (!cat) return undefined;
  // The index says a loaded package defines it, yet TeX says it does not (an option, a condition):
  // only a probe compile can tell whether another package helps.
  const provided = source !== undefined && documentProvides(cat, source.text, name, kind);
  if (provided && !ctx.probing) return 'loaded';
  const loads = source ? readDocument(cat, source.text).loads : undefined;
  const ranked = rankCandidates(cat, name, kind, { engine, source: source?.text, ...(preferred ? { preferred } : {}) }).filter((c) => !loads?.has(c.package));
  const top = ranked[0];
  if (!top) return provided ? 'loaded' : undefined;
  const verdict = verdicts?.get(verdictKey(kind, name));
  if (verdict === null) return 'none';
  if (verdict !== undefined) return { provider: { package: verdict, engines: cat.engines(verdict) } };
  const verify: Verification = { kind, name, candidates: ranked.slice(0, 3).map((c) => c.package), needed: provided || ranked.length > 1 || !top.sure };
  if (at !== undefined) verify.line = at;
  return { provider: { package: top.package, engines: top.engines }, verify };
}

/** The package is loaded, but without the option that defines the name (xcolor's `table`). */
function withOption(provider: Provider, symbol: string, at: number | undefined, source: Source, summary: string, error_class: ErrorClass): Finding {
  const loadedAt = source.usePackageLine(provider.package);
  const wanted = usepackage(provider.package, provider.options);
  const fix = `Load ${provider.package} with the ${provider.options} option: change its \\usepackage${onLine(loadedAt)} to ${wanted} (it provides ${symbol} only with that option).`;
  return {
    error_class,
    summary: `${summary} ${provider.package} is loaded without the ${provider.options} option that defines it.`,
    suggested_fix: fix,
    suggested_package: provider.package,
    symbol,
    line: at,
    hint: `Change the \\usepackage of ${provider.package}${onLine(loadedAt)} to ${wanted} and compile again.`,
  };
}

/** \renewcommand of a command that does not exist. */
const renewUndefined: Rule = ({ block, line }) => {
  const m = /^LaTeX Error: (?:Command )?(\\\S+) undefined\.?$/.exec(block.message);
  if (!m?.[1]) return undefined;
  const symbol = m[1];
  const fix = `Use \\newcommand instead of \\renewcommand for ${symbol}${onLine(line)}: ${symbol} does not exist yet.`;
  return {
    error_class: 'undefined_command',
    summary: `${symbol} is redefined${onLine(line)} but was never defined.`,
    suggested_fix: fix,
    symbol,
    line,
    hint: `Change \\renewcommand to \\newcommand for ${symbol}${onLine(line)} and compile again.`,
  };
};

// ---------------------------------------------------------------- environments

const THEOREMS = ['theorem', 'lemma', 'corollary', 'proposition', 'definition', 'remark', 'example', 'conjecture', 'claim', 'exercise', 'problem', 'note', 'observation', 'fact', 'assumption', 'hypothesis', 'axiom', 'notation', 'question', 'solution'];
const BEAMER = ['frame', 'block', 'alertblock', 'exampleblock', 'columns', 'column', 'onlyenv', 'overlayarea', 'overprint'];

const undefinedEnvironment: Rule = (ctx) => {
  const { block, engine, source, line } = ctx;
  const m = /^LaTeX Error: Environment (\S+) undefined/.exec(block.message);
  if (!m?.[1]) return undefined;
  const name = m[1];
  const symbol = name;
  const summary = `The environment "${name}"${onLine(line)} is not defined.`;
  const base = { error_class: 'undefined_environment' as const, symbol, line };
  if (THEOREMS.includes(name)) {
    const title = name.charAt(0).toUpperCase() + name.slice(1);
    const fix = `Add \\newtheorem{${name}}{${title}} ${PREAMBLE}: theorem-like environments must be declared before use.`;
    return { ...base, summary, suggested_fix: fix, hint: `Add \\newtheorem{${name}}{${title}} to the preamble and compile again.` };
  }
  if (BEAMER.includes(name)) {
    const fix = `Use \\documentclass{beamer} for slides: the ${name} environment${onLine(line)} exists only in the beamer class.`;
    return { ...base, summary, suggested_fix: fix, hint: 'Change the document class to beamer and compile again.' };
  }
  if (name === 'abstract' && source?.find(/\\documentclass(\[[^\]]*\])?\{(book|scrbook)\}/)) {
    const fix = `Replace \\begin{abstract}...\\end{abstract}${onLine(line)} with a \\chapter*{Abstract} or use \\documentclass{report}: the book class has no abstract environment.`;
    return { ...base, summary, suggested_fix: fix, hint: 'Use the report class (or a \\chapter*{Abstract}) instead of the abstract environment and compile again.' };
  }
  const provider = ENVIRONMENT_PACKAGES.get(name);
  if (provider?.options && source?.loads(provider.package)) return withOption(provider, name, line, source, summary, 'undefined_environment');
  if (provider && source?.loads(provider.package)) return undefined;
  if (provider) return withPackage(provider, name, line, engine, summary, 'environment', source);
  const indexed = fromIndex(ctx, 'environment', name, line);
  if (indexed === 'loaded') return undefined;
  if (indexed && indexed !== 'none') return { ...withPackage(indexed.provider, name, line, engine, summary, 'environment', source), ...(indexed.verify ? { verify: indexed.verify } : {}) };
  const near = closest(name, [...ENVIRONMENT_PACKAGES.keys(), ...KERNEL_ENVIRONMENTS]);
  const fix = near
    ? `Change "${name}"${onLine(line)} to "${near}" in both \\begin and \\end${ENVIRONMENT_PACKAGES.has(near) && !source?.loads(ENVIRONMENT_PACKAGES.get(near)?.package ?? '') ? ` and add ${usepackage(ENVIRONMENT_PACKAGES.get(near)?.package ?? '')} to the preamble` : ''}; if it is your own environment, define it with \\newenvironment{${name}}{...}{...} in the preamble.`
    : `Define it with \\newenvironment{${name}}{...}{...} in the preamble, or replace \\begin{${name}}/\\end{${name}}${onLine(line)}; ${indexed === 'none' ? 'no installed package that defines it got TeX past it in a test compile' : 'no package we know provides it'}.`;
  return {
    ...base,
    summary,
    suggested_fix: fix,
    hint: near
      ? `Change the environment "${name}"${onLine(line)} to "${near}" and compile again.`
      : `Define the environment "${name}" with \\newenvironment or replace it${onLine(line)}, then compile again.`,
  };
};

const mismatchedEnvironment: Rule = ({ block, source, line }) => {
  if (/^(Extra \}, or forgotten \\endgroup|Missing \} inserted)/.test(block.message) && source && line !== undefined) {
    // \end{X} closed X's group while an environment opened inside X was still open.
    const lctx = block.context.find((c) => /^l\.\d+/.test(c.read));
    const closer = lctx ? /\\end\s*\{([^}]+)\}\s*$/.exec(lctx.read)?.[1] : undefined;
    const open = source.openEnvironments(line);
    const inner = open.at(-1);
    if (closer && inner && inner.name !== closer && open.some((e) => e.name === closer)) {
      const fix = `Add \\end{${inner.name}} before \\end{${closer}} on line ${line}: the ${inner.name} environment opened on line ${inner.line} is never closed.`;
      return {
        error_class: 'mismatched_environment',
        summary: `\\begin{${inner.name}} (line ${inner.line}) is still open when \\end{${closer}} is reached on line ${line}.`,
        suggested_fix: fix,
        symbol: inner.name,
        line,
        hint: `Add \\end{${inner.name}} before line ${line} and compile again.`,
      };
    }
  }
  const m = /^LaTeX Error: \\begin\{([^}]+)\} (?:on input line (\d+) )?ended by \\end\{([^}]+)\}/.exec(block.message);
  if (!m?.[1] || !m[3]) return undefined;
  const [, opened, openedAt, closer] = m;
  const since = openedAt ? ` (opened on line ${openedAt})` : '';
  const summary = `\\begin{${opened}}${since} is closed by \\end{${closer}}${onLine(line)}.`;
  const base = { error_class: 'mismatched_environment' as const, summary, line };
  if (opened === 'document') {
    const fix = `Remove the \\end{${closer}}${onLine(line)}: no \\begin{${closer}} is open there (or add the missing \\begin{${closer}} before it).`;
    return { ...base, symbol: closer, suggested_fix: fix, hint: `Remove the stray \\end{${closer}}${onLine(line)} and compile again.` };
  }
  const enclosing = closer === 'document' || (line !== undefined && source?.openEnvironments(line).some((e) => e.name === closer));
  if (enclosing) {
    const fix = `Add \\end{${opened}} before \\end{${closer}}${onLine(line)}: the ${opened} environment${since} is never closed.`;
    return { ...base, symbol: opened, suggested_fix: fix, hint: `Add \\end{${opened}} before line ${line ?? '?'} and compile again.` };
  }
  const fix = source
    ? `Change \\end{${closer}}${onLine(line)} to \\end{${opened}} to match \\begin{${opened}}${since}.`
    : `Change \\end{${closer}}${onLine(line)} to \\end{${opened}}${since}; if the ${closer} environment encloses it, add \\end{${opened}} before that line instead.`;
  return { ...base, symbol: opened, suggested_fix: fix, hint: `Change \\end{${closer}}${onLine(line)} to \\end{${opened}} and compile again.` };
};

/**
 * A document without \begin{document} fails somewhere in what should be its body, with
 * whatever error the first body command causes there (a KOMA letter's \phonename, say):
 * whatever TeX said, the missing line is the cause.
 */
const absentBeginDocument: Rule = (ctx) => {
  const { source } = ctx;
  if (!source || source.beginDocument !== undefined || source.find(/\\documentclass/) === undefined) return undefined;
  if (/^LaTeX Error: Missing \\begin\{document\}/.test(ctx.block.message)) return missingBeginDocument(ctx);
  return missingBeginDocument({ ...ctx, block: { ...ctx.block, message: 'LaTeX Error: Missing \\begin{document}.', context: [] } });
};

const missingBeginDocument: Rule = ({ block, source, line }) => {
  if (!/^LaTeX Error: Missing \\begin\{document\}/.test(block.message)) return undefined;
  const begin = source?.beginDocument;
  const lctx = block.context.find((c) => /^l\.\d+/.test(c.read));
  const text = lctx ? (lctx.read.replace(/^l\.\d+ /, '').trim().slice(-1) + lctx.rest).trim().slice(0, 40) : '';
  const what = text ? ` ("${text}")` : '';
  const fix =
    source && begin === undefined
      ? `Add \\begin{document} after the preamble (before line ${line ?? '?'})${source.find(/\\end\s*\{document\}/) === undefined ? ' and \\end{document} at the end of the file' : ''}.`
      : `Move the text${what}${onLine(line)} below \\begin{document}${begin ? ` (line ${begin})` : ''} or delete it: the preamble may only contain commands.`;
  return {
    error_class: 'missing_begin_document',
    summary: `Text${what}${onLine(line)} appears before \\begin{document}.`,
    suggested_fix: fix,
    symbol: '\\begin{document}',
    line,
    hint: fix.replace(/:.*$/, '').replace(/\.$/, '') + ' and compile again.',
  };
};

// ---------------------------------------------------------------- math

const missingMath: Rule = ({ block, source, line }) => {
  const only = /^LaTeX Error: (\\\S+) allowed only in math mode/.exec(block.message);
  if (only?.[1]) {
    const fix = `Put ${only[1]}${onLine(line)} inside math: $${only[1]}{...}$ in text, or inside an equation.`;
    return {
      error_class: 'missing_math_mode',
      summary: `${only[1]}${onLine(line)} is a math command used outside math.`,
      suggested_fix: fix,
      symbol: only[1],
      line,
      hint: `Wrap ${only[1]}${onLine(line)} in $...$ and compile again.`,
    };
  }
  if (!/^Missing \$ inserted/.test(block.message)) return undefined;
  const paragraphEnd = block.context.some((c) => /^<to be read again>/.test(c.read) && /^\\par\b/.test(c.rest));
  const lctx = block.context.find((c) => /^l\.\d+/.test(c.read));
  const inText = block.context.find((c) => !/^<(inserted text|to be read again|recently read)>/.test(c.read));
  const token = inText ? commandBefore(inText.read) : undefined;
  if (paragraphEnd || (lctx && lctx.read.replace(/^l\.\d+/, '').trim() === '')) {
    // The paragraph ended inside math: a blank line in a display, or a $ never closed.
    const blank = line !== undefined && source !== undefined && source.line(line).trim() === '';
    const opened = line !== undefined && source ? source.findBack(/^(?:[^$\\]|\\.)*\$(?:(?:[^$\\]|\\.)*\$(?:[^$\\]|\\.)*\$)*(?:[^$\\]|\\.)*$/, line - 1) : undefined;
    if (blank && source) {
      const inDisplay = source.openEnvironments(line ?? 0).at(-1);
      if (inDisplay && inDisplay.name !== 'document') {
        const fix = `Remove the blank line ${line} inside the ${inDisplay.name} environment (opened on line ${inDisplay.line}): math may not contain an empty line.`;
        return { error_class: 'missing_math_mode', summary: `Blank line ${line} is inside the ${inDisplay.name} formula.`, suggested_fix: fix, symbol: '$', line, hint: `Remove the blank line ${line} inside the ${inDisplay.name} environment and compile again.` };
      }
    }
    if (opened !== undefined) {
      const fix = `Close the formula opened with $ on line ${opened}: add the missing $ where the formula ends (before the paragraph ends on line ${line ?? '?'}).`;
      return { error_class: 'missing_math_mode', summary: `The $ on line ${opened} opens a formula that is never closed.`, suggested_fix: fix, symbol: '$', line: opened, hint: `Add the closing $ to the formula on line ${opened} and compile again.` };
    }
    const fix = `Close the formula that is still open at line ${line ?? '?'} (a $ or \\) is missing before the paragraph ends), or remove the blank line inside the math environment.`;
    return {
      error_class: 'missing_math_mode',
      summary: `A formula is still open where the paragraph ends${onLine(line)}.`,
      suggested_fix: fix,
      symbol: '$',
      line,
      hint: `Close the open formula before line ${line ?? '?'} (add the missing $ or remove the blank line in the math) and compile again.`,
    };
  }
  const what = token ? `${token}` : 'a math-only symbol';
  const fix = `Put the formula containing ${what}${onLine(line)} in math mode: write it as $...$ (for example $x^2$, $a_i$, $\\alpha$); for literal characters write \\_ , \\^{} or \\textasciicircum.`;
  return {
    error_class: 'missing_math_mode',
    summary: `${what}${onLine(line)} may only be used in math mode.`,
    suggested_fix: fix,
    symbol: token,
    line,
    hint: `Wrap the formula with ${what}${onLine(line)} in $...$ and compile again.`,
  };
};

// ---------------------------------------------------------------- braces

const runaway: Rule = ({ block, source, line }) => {
  // Robust commands print with a space in their name (`\\author  was complete`), and "use of
  // \\X." ends the sentence with a period that is not part of the name.
  const m = /^(?:Paragraph ended before (\\\S+)\s+was complete|File ended while scanning (use|definition|text) of (\\\S+))/.exec(block.message);
  if (!m) return undefined;
  const internal = (m[1] ?? m[3] ?? '').replace(/(?<=^\\.+)\.$/, '');
  let symbol: string | undefined = /@/.test(internal) ? undefined : internal;
  let at = line;
  if (source && block.runaway) {
    // TeX prints tokens with a space after control words: `\mathbb {R}` is `\mathbb{R}` in the source.
    const printed = block.runaway.replace(/(\\[A-Za-z@]+) (?=[^A-Za-z\s])/g, '$1').replace(/\s+/g, ' ').trim();
    const firstLine = printed.split(/ \\par\b/)[0] ?? printed;
    const candidates = [firstLine.slice(0, 40), firstLine.split(' ')[0] ?? ''];
    let needle = '';
    let found: number | undefined;
    for (const candidate of candidates) {
      if (candidate.length < 2) continue;
      found = source.locate(candidate, line);
      if (found !== undefined) {
        needle = candidate;
        break;
      }
    }
    if (found !== undefined) {
      at = found;
      const text = source.line(found);
      const idx = text.indexOf(needle.split(' ')[0] ?? needle);
      const before = /(\\[A-Za-z]+)\*?\s*(\[[^\]]*\])?\s*(\{[^{}]*\})?\s*$/.exec(text.slice(0, Math.max(0, idx)));
      if (before?.[1]) symbol = before[1];
    }
  }
  if (m[2] === 'definition') {
    const fix = `Close the braces of the definition of ${internal}${onLine(at)}: a } is missing.`;
    return { error_class: 'runaway_argument', summary: `The definition of ${internal}${onLine(at)} never ends: a closing brace is missing.`, suggested_fix: fix, symbol: internal, line: at, hint: `Add the missing } to the definition of ${internal}${onLine(at)} and compile again.` };
  }
  const what = symbol ? `the argument of ${symbol}` : 'an argument';
  const ended = m[1] ? 'a blank line (paragraph end)' : 'the end of the file';
  const fix = `Add the missing } that closes ${what}${at === undefined ? '' : ` starting on line ${at}`}; TeX reached ${ended} before it.`;
  return {
    error_class: 'runaway_argument',
    summary: `${what.charAt(0).toUpperCase() + what.slice(1)}${onLine(at)} is never closed.`,
    suggested_fix: fix,
    symbol,
    line: at,
    hint: `Add the missing } for ${what}${onLine(at)} and compile again.`,
  };
};

const unbalanced: Rule = ({ block, line }) => {
  const msg = block.message;
  const base = { error_class: 'unbalanced_braces' as const, line };
  if (/^(Too many \}'s|Extra \}, or forgotten)/.test(msg)) {
    return { ...base, symbol: '}', summary: `There is a } without a matching {${onLine(line)}.`, suggested_fix: `Remove the extra }${onLine(line)} or add the { it should close.`, hint: `Remove the extra }${onLine(line)} (or add its {) and compile again.` };
  }
  if (/^Missing \} inserted/.test(msg)) {
    return { ...base, symbol: '}', summary: `A group or formula is not closed${onLine(line)}.`, suggested_fix: `Add the missing }${onLine(line)} so every { has its }.`, hint: `Add the missing }${onLine(line)} and compile again.` };
  }
  const arg = /^Argument of (\\\S+) has an extra \}/.exec(msg);
  if (arg?.[1]) {
    return { ...base, symbol: arg[1], summary: `The argument of ${arg[1]}${onLine(line)} has an unmatched }.`, suggested_fix: `Balance the braces in the argument of ${arg[1]}${onLine(line)}: write ${arg[1]}{...} with every { closed by a }.`, hint: `Balance the braces of ${arg[1]}${onLine(line)} and compile again.` };
  }
  if (/^Missing \\right\. inserted/.test(msg)) {
    return { ...base, symbol: '\\left', summary: `A \\left delimiter${onLine(line)} has no matching \\right.`, suggested_fix: `Add a matching \\right) (or \\right. for no delimiter) in the same formula as the \\left${onLine(line)}.`, hint: `Add the matching \\right for the \\left${onLine(line)} and compile again.` };
  }
  if (/^Extra \\right/.test(msg)) {
    return { ...base, symbol: '\\right', summary: `A \\right delimiter${onLine(line)} has no matching \\left.`, suggested_fix: `Add a \\left before the \\right${onLine(line)} in the same formula, or remove the \\right.`, hint: `Pair the \\right${onLine(line)} with a \\left and compile again.` };
  }
  return undefined;
};

// ---------------------------------------------------------------- other certain errors

const other: Rule = ({ block, source, line, blocks, engine: ctxEngine }) => {
  const msg = block.message;
  const fatal = (symbol: string | undefined, summary: string, fix: string, hint: string, at = line): Finding => ({ error_class: 'fatal_error', symbol, summary, suggested_fix: fix, line: at, hint });

  if (/^LaTeX Error: Can be used only in preamble/.test(msg)) {
    const lctx = block.context.find((c) => /^l\.\d+/.test(c.read));
    const cmd = lctx ? lastToken(lctx.read) : undefined;
    const written = line !== undefined && cmd?.startsWith('\\') ? new RegExp(`${escape(cmd)}\\s*(\\[[^\\]]*\\])?\\s*(\\{[^}]*\\})?`).exec(source?.line(line) ?? '')?.[0] : undefined;
    const what = written ?? (cmd?.startsWith('\\') ? cmd : 'the command');
    return fatal(cmd?.startsWith('\\') ? cmd : undefined, `${what}${onLine(line)} is only allowed in the preamble.`, `Move ${what}${onLine(line)} above \\begin{document}${source?.beginDocument ? ` (line ${source.beginDocument})` : ''}.`, `Move ${what}${onLine(line)} into the preamble and compile again.`);
  }
  const clash = /^LaTeX Error: Option clash for package (\S+)\./.exec(msg);
  if (clash?.[1]) {
    const pkg = clash[1];
    const at = (line !== undefined ? source?.usePackageLines(pkg).filter((n) => n <= line).at(-1) : undefined) ?? line;
    return fatal(pkg, `The package ${pkg} is loaded a second time${onLine(at)} with options the first load did not have.`, `Load ${pkg} once, with all options in a single \\usepackage[...]{${pkg}} (remove the one${onLine(at)} and move its options to the first), or put \\PassOptionsToPackage{...}{${pkg}} before \\documentclass when a class loads it.`, `Merge the \\usepackage lines of ${pkg} into one with all options and compile again.`, at);
  }
  if (/^Misplaced alignment tab character &/.test(msg)) {
    const open = line !== undefined ? source?.openEnvironments(line, '&') : undefined;
    const env = open?.at(-1);
    if (env && env.name !== 'document') {
      // LaTeX has plain-TeX \pmatrix and \cases, so \begin{pmatrix} without amsmath fails only at the first &.
      const provider = ENVIRONMENT_PACKAGES.get(env.name);
      if (provider && !source?.loads(provider.package)) {
        return withPackage(provider, env.name, line, ctxEngine, `The ${env.name} environment${onLine(env.line)} is not defined by LaTeX itself (its first & fails).`, 'environment', source);
      }
      return undefined; // an & inside an environment: not certainly a literal ampersand
    }
    return fatal('&', `A & outside a table or alignment${onLine(line)}.`, `Write \\& for a literal ampersand${onLine(line)}, or put the & inside a tabular/align environment.`, `Replace & with \\&${onLine(line)} and compile again.`);
  }
  if (/^Extra alignment tab has been changed to \\cr/.test(msg)) {
    return fatal('&', `A table row${onLine(line)} has more cells than the table has columns.`, `Remove the extra & from the row${onLine(line)}, or add a column to the column specification of the tabular.`, `Make the row${onLine(line)} have as many cells as the tabular has columns and compile again.`);
  }
  if (/^LaTeX Error: Lonely \\item/.test(msg)) {
    return fatal('\\item', `\\item${onLine(line)} is not inside a list.`, `Put \\item${onLine(line)} inside \\begin{itemize} ... \\end{itemize} (or enumerate/description).`, `Wrap the \\item lines${onLine(line)} in an itemize environment and compile again.`);
  }
  if (/^LaTeX Error: There's no line here to end/.test(msg)) {
    // \\ looks ahead for * or [, so TeX may report the next line.
    const at = line !== undefined && source && !/\\\\/.test(source.line(line)) ? (source.findBack(/\\\\/, line - 1) ?? line) : line;
    return fatal('\\\\', `\\\\${onLine(at)} ends a line where there is none (at the start of a paragraph or after a blank line).`, `Remove the \\\\${onLine(at)}; separate paragraphs with a blank line, or use \\vspace{...} for extra space.`, `Remove the \\\\${onLine(at)} and compile again.`, at);
  }
  const dbl = /^Double (superscript|subscript)/.exec(msg);
  if (dbl?.[1]) {
    const c = dbl[1] === 'superscript' ? '^' : '_';
    return fatal(c, `Two ${dbl[1]}s in a row${onLine(line)}.`, `Group the ${dbl[1]}s with braces${onLine(line)}: write x${c}{a${c}b} or {x${c}a}${c}b instead of x${c}a${c}b.`, `Add braces to the double ${dbl[1]}${onLine(line)} and compile again.`);
  }
  const floatOption = /^LaTeX Error: Unknown float option `H'/.exec(msg);
  if (floatOption) {
    return { ...fatal('H', `The float placement [H]${onLine(line)} needs the float package.`, `Add \\usepackage{float} ${PREAMBLE}: it provides the [H] placement.`, 'Add \\usepackage{float} to the preamble and compile again.'), suggested_package: 'float' };
  }
  const defined = /^LaTeX Error: Command (\\\S+) already defined/.exec(msg);
  if (defined?.[1]) {
    const cmd = defined[1];
    return fatal(cmd, `${cmd} is defined again${onLine(line)} but already exists.`, `Rename your command${onLine(line)} (e.g. \\my${cmd.slice(1)}) or use \\renewcommand{${cmd}} to replace the existing one.`, `Use \\renewcommand for ${cmd}${onLine(line)} (or a new name) and compile again.`);
  }
  if (/^You can't use `macro parameter character #'/.test(msg)) {
    return fatal('#', `A # appears in text${onLine(line)}.`, `Write \\# for a literal # sign${onLine(line)}.`, `Replace # with \\#${onLine(line)} and compile again.`);
  }
  const color = /^Package xcolor Error: Undefined color `([^']+)'/.exec(msg);
  if (color?.[1]) {
    return fatal(color[1], `The color "${color[1]}"${onLine(line)} is not defined.`, `Define it in the preamble with \\definecolor{${color[1]}}{HTML}{RRGGBB}, or use a predefined name (red, green, blue, cyan, magenta, yellow, black, gray, white, darkgray, lightgray, brown, lime, olive, orange, pink, purple, teal, violet).`, `Define the color "${color[1]}" with \\definecolor in the preamble and compile again.`);
  }
  if (/^LaTeX Error: No \\title given/.test(msg)) {
    return fatal('\\title', `\\maketitle${onLine(line)} is used but no \\title was given.`, `Add \\title{...} ${PREAMBLE}, or remove \\maketitle${onLine(line)}.`, 'Add \\title{...} to the preamble and compile again.');
  }
  if (/^Illegal unit of measure/.test(msg)) {
    return fatal(undefined, `A length${onLine(line)} has no unit.`, `Give the length${onLine(line)} a unit, e.g. 2cm, 10pt, 0.5\\textwidth.`, `Add a unit (cm, pt, \\textwidth) to the length${onLine(line)} and compile again.`);
  }
  if (/^LaTeX Error: Too many unprocessed floats/.test(msg)) {
    return fatal(undefined, `Too many figures and tables are waiting to be placed${onLine(line)}.`, `Add \\clearpage after a few figures/tables before line ${line ?? '?'}, or use the [H] placement of the float package.`, `Add \\clearpage between the figures before line ${line ?? '?'} and compile again.`);
  }
  if (/^Emergency stop/.test(msg) && blocks.every((b) => b === block || /Emergency stop|Fatal error occurred/.test(b.message)) && block.context.some((c) => /^<\*>/.test(c.read))) {
    // The file ended without \end{document}: TeX waits for more input and stops.
    if (source && !source.find(/\\end\s*\{document\}/)) {
      return fatal('\\end{document}', 'The document never ends: \\end{document} is missing.', 'Add \\end{document} as the last line of main.tex.', 'Add \\end{document} at the end of main.tex and compile again.', undefined);
    }
  }
  const font = /Font (\S+) at \d+ not found|Font \\\S+=(\S+) at [\d.]+pt not loadable/.exec(msg);
  const fontName = font?.[1] ?? font?.[2];
  if (fontName && /^(ec|tc)[a-z]{2}\d{3,4}$/.test(fontName)) {
    // T1/TS1 Computer Modern (EC) fonts exist here only as METAFONT sources; Latin Modern has them as Type 1.
    return {
      ...fatal(fontName, `The T1/TS1 Computer Modern font ${fontName} could not be loaded on this server.`, `Add \\usepackage{lmodern} ${PREAMBLE}: Latin Modern provides the same fonts in the T1 and TS1 encodings.`, 'Add \\usepackage{lmodern} to the preamble and compile again.', source?.find(/\\usepackage\s*\[[^\]]*T1[^\]]*\]\s*\{fontenc\}/) ?? line),
      suggested_package: 'lmodern',
    };
  }
  if (/^TeX capacity exceeded/.test(msg)) {
    const rec = block.context.map((c) => /^(\\[A-Za-z@]+) ?->(.*)$/.exec(c.read)).find((r) => r?.[1] && r[2]?.includes(r[1]));
    if (rec?.[1]) {
      const cmd = rec[1];
      const at = source?.find(new RegExp(`\\\\(re)?newcommand\\*?\\s*\\{?\\\\${escape(cmd.slice(1))}(?![A-Za-z@])`)) ?? line;
      return fatal(cmd, `${cmd} calls itself without end.`, `Change the definition of ${cmd}${onLine(at)} so it does not use ${cmd} inside itself (to extend a command, save the old one first with \\let\\old${cmd.slice(1)}${cmd}).`, `Remove the self-reference from the definition of ${cmd}${onLine(at)} and compile again.`, at);
    }
  }
  return undefined;
};

/** Rules that hold wherever TeX was when it failed, even inside a package or class file. */
export const RULES_ANYWHERE: readonly Rule[] = [missingFile, engineRequirement, fontNotFound, unicodeCharacter];

export const RULES: readonly Rule[] = [
  missingFile,
  engineRequirement,
  fontNotFound,
  unicodeCharacter,
  absentBeginDocument,
  inputEncoding,
  encoding,
  undefinedCommand,
  renewUndefined,
  undefinedEnvironment,
  mismatchedEnvironment,
  missingBeginDocument,
  runaway,
  missingMath,
  unbalanced,
  other,
];

const PACKAGE_NAMES = [...new Set(PACKAGES.map((p) => p.package).concat(['amsfonts', 'graphics', 'color', 'inputenc', 'fontenc', 'lmodern', 'textcomp', 'babel', 'hyperref', 'subfigure', 'times', 'mathptmx', 'helvet', 'courier', 'palatino', 'tgtermes', 'parskip', 'lastpage', 'colortbl', 'xparse', 'alphabeta']))];

function escape(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}
