// The LaTeX security policy of template sources: 14 named rules, checked statically before a
// template is stored and again on every rendered document. The compile sandbox (no shell
// escape, no network, confined paths) still applies: this is the first of two walls, and it
// refuses rather than guesses, so a rare legitimate construct may need rewriting.
import { ServiceError } from '../errors.js';

export const SECURITY_RULES = [
  { number: 1, id: 'shell_escape', title: 'shell-escape primitives (\\write18, \\ShellEscape)' },
  { number: 2, id: 'file_write', title: 'file writes (\\openout, \\newwrite, filecontents)' },
  { number: 3, id: 'file_read', title: 'primitive file reads (\\openin, \\read, \\readline)' },
  { number: 4, id: 'unsafe_path', title: 'absolute, home or parent paths in a file argument' },
  { number: 5, id: 'pipe_input', title: 'pipe input (\\input|"command")' },
  { number: 6, id: 'shell_escape_package', title: 'packages that need shell escape' },
  { number: 7, id: 'tikz_externalize', title: 'TikZ/PGF externalisation' },
  { number: 8, id: 'catcode_change', title: 'category code changes (\\catcode, \\ExplSyntaxOn)' },
  { number: 9, id: 'retokenize', title: 're-tokenising tricks (\\scantokens, \\everyeof, \\endlinechar)' },
  { number: 10, id: 'dangerous_lua', title: 'dangerous Lua in \\directlua or luacode' },
  { number: 11, id: 'file_probe', title: 'file-probing primitives (\\pdffiledump, \\pdfmdfivesum, …)' },
  { number: 12, id: 'unsafe_link_action', title: 'JavaScript, file: and launch actions in links' },
  { number: 13, id: 'liquid_file_tags', title: 'Liquid tags that touch files (include, render, layout)' },
  { number: 14, id: 'indirect_command', title: 'forbidden commands spelled indirectly (\\csname … \\endcsname, ^^)' },
] as const;

export type SecurityRuleId = (typeof SECURITY_RULES)[number]['id'];

export interface SecurityViolation {
  rule: SecurityRuleId;
  rule_number: number;
  line: number;
  message: string;
}

const SHELL_PACKAGES = ['shellesc', 'minted', 'pythontex', 'sagetex', 'gnuplottex', 'bashful', 'svg', 'auto-pst-pdf'];
const LINK_PACKAGES = ['insdljs', 'eforms', 'aeb_pro', 'aebjs'];

/** Control sequences refused outright, with the rule they break. */
const FORBIDDEN: Record<string, SecurityRuleId> = {
  ShellEscape: 'shell_escape',
  DelayedShellEscape: 'shell_escape',
  openout: 'file_write',
  newwrite: 'file_write',
  openin: 'file_read',
  read: 'file_read',
  readline: 'file_read',
  newread: 'file_read',
  // Image primitives read any file into the PDF; \includegraphics is the way to place images.
  pdfximage: 'file_read',
  saveimageresource: 'file_read',
  XeTeXpicfile: 'file_read',
  XeTeXpdffile: 'file_read',
  catcode: 'catcode_change',
  ExplSyntaxOn: 'catcode_change',
  ProvidesExplPackage: 'catcode_change',
  ProvidesExplFile: 'catcode_change',
  ProvidesExplClass: 'catcode_change',
  scantokens: 'retokenize',
  scantextokens: 'retokenize',
  everyeof: 'retokenize',
  endlinechar: 'retokenize',
  pdffiledump: 'file_probe',
  pdfmdfivesum: 'file_probe',
  pdffilesize: 'file_probe',
  pdffilemoddate: 'file_probe',
  filedump: 'file_probe',
  filesize: 'file_probe',
  filemdfivesum: 'file_probe',
  filemoddate: 'file_probe',
  mdfivesum: 'file_probe',
  tikzexternalize: 'tikz_externalize',
  tikzexternaldisable: 'tikz_externalize',
};

/** Names whose indirect construction (\csname, \let) is refused. */
const GUARDED = [
  'write', 'immediate', 'input', '@@input', '@input', 'include', 'special', 'pdfobj', 'pdfannot', 'pdfximage',
  'directlua', 'latelua', 'luaexec', 'luadirect', 'usepackage', 'RequirePackage', 'csname', 'endcsname',
  ...Object.keys(FORBIDDEN),
];

/** Commands whose braced (or, for primitives, bare) argument names a file. */
const FILE_COMMANDS = new Set([
  'input', '@@input', '@input', '@iinput', 'include', 'includeonly', 'InputIfFileExists', 'IfFileExists',
  'includegraphics', 'includepdf', 'includesvg', 'lstinputlisting', 'verbatiminput', 'VerbatimInput',
  'inputminted', 'import', 'subimport', 'inputfrom', 'includefrom', 'subinputfrom', 'subincludefrom',
  'graphicspath', 'bibliography', 'addbibresource', 'bibliographystyle', 'usepackage', 'RequirePackage',
  'documentclass', 'LoadClass', 'pdfximage', 'XeTeXpicfile', 'XeTeXpdffile', 'saveimageresource', 'openin',
  'includestandalone', 'externaldocument', 'addglobalbib', 'pgfimage', 'pgfdeclareimage',
]);
const BARE_FILE_PRIMITIVES = new Set(['input', '@@input', 'pdfximage', 'XeTeXpicfile', 'XeTeXpdffile']);

const LUA_COMMANDS = new Set(['directlua', 'latelua', 'luaexec', 'luadirect']);
const DANGEROUS_LUA = [
  /\b(os|io|debug|package|lfs|socket|ffi|kpse|status|mime|ltn12|url|http)\s*(\.|:|\[)/,
  /\b(require|load|loadstring|loadfile|dofile|getfenv|setfenv|rawget|rawset|rawequal|newproxy|setmetatable|getmetatable|collectgarbage)\b/,
  /\b_G\b|\b_ENV\b/,
  // Building text or tokens from pieces TeX never sees as written.
  /\b(string|utf8)\s*\.\s*char\b|:\s*char\b|\breverse\b/,
  /\\(\d{1,3}|x[0-9a-fA-F]{2}|u\{)/,
  /\btoken\s*\.\s*(create|new|put_next|set_macro|set_char|expand)\b|\btex\s*\.\s*(runtoks|scantoks|setcatcode|catcode)\b/,
];

/** The TeX a Lua block could print: its string literals joined, so "\\wri" .. "te18" is seen whole. */
function luaStrings(code: string): string {
  const parts: string[] = [];
  for (const match of code.matchAll(/"((?:[^"\\\n]|\\.)*)"|'((?:[^'\\\n]|\\.)*)'/g)) {
    parts.push((match[1] ?? match[2]!).replace(/\\(.)/g, '$1'));
  }
  // Long strings [[…]] keep their text as written.
  for (let open = code.indexOf('[['); open !== -1; open = code.indexOf('[[', open + 2)) {
    const close = code.indexOf(']]', open + 2);
    if (close === -1) break;
    parts.push(code.slice(open + 2, close));
    open = close;
  }
  return parts.join('');
}

function luaProblem(code: string): string | null {
  const bad = DANGEROUS_LUA.find((re) => re.test(code));
  if (bad) return `Lua code using ${bad.exec(code)![0].trim()}`;
  const printed = luaStrings(code);
  if (printed.includes('\\')) {
    const inner = checkControlSequences(new Scanner(printed));
    if (inner) return `Lua code printing ${inner.message.replace(/^Line \d+: /, '').replace(/ is not allowed.*$/, '')}`;
  }
  return null;
}

const LINK_SCHEMES = /^\s*(javascript|file|run|launch|vbscript|data)\s*:/i;
/** Commands that write raw PDF objects, where an action dictionary could hide. */
const PDF_COMMANDS = new Set([
  'pdfannot', 'pdfobj', 'pdfstartlink', 'pdfcatalog', 'pdfnames', 'pdfdest', 'pdfoutline', 'pdfliteral',
  'pdfextension', 'special', 'hypersetup', 'pdfpageattr', 'pdfpagesattr', 'pdfpageresources', 'pdfinfo',
  'latelua', 'AtBeginShipout', 'literalps', 'pdfximage', 'pdfrefobj', 'pdfpagesattributes', 'XeTeXpdffile',
]);
const PDF_ACTIONS = /\/(Launch|JavaScript|JS|SubmitForm|ImportData|GoToR|GoToE|ResetForm|Rendition|Sound|Movie)\b/;

// Arguments worth checking (file names, URLs, library lists) are short; a longer or unclosed
// one is refused rather than scanned again and again.
const ARG_SCAN_LIMIT = 2_000;

/** First index of `needle` at or after `from`, remembering misses so repeated searches stay linear. */
class Finder {
  private readonly found = new Map<string, number>();
  constructor(private readonly source: string) {}
  next(needle: string, from: number): number {
    const known = this.found.get(needle);
    if (known !== undefined && (known === -1 || known >= from)) return known;
    const at = this.source.indexOf(needle, from);
    this.found.set(needle, at);
    return at;
  }
}

class Scanner {
  readonly finder: Finder;
  private readonly lineStarts: number[] = [0];
  constructor(readonly source: string) {
    this.finder = new Finder(source);
    for (let i = 0; i < source.length; i++) if (source[i] === '\n') this.lineStarts.push(i + 1);
  }

  lineAt(index: number): number {
    let lo = 0;
    let hi = this.lineStarts.length - 1;
    while (lo < hi) {
      const mid = (lo + hi + 1) >> 1;
      if (this.lineStarts[mid]! <= index) lo = mid;
      else hi = mid - 1;
    }
    return lo + 1;
  }

  /** The balanced {…} group starting at or after `from` (blanks and [options] skipped). */
  group(from: number, skipOptions = true, max = ARG_SCAN_LIMIT): { text: string; start: number; end: number; closed: boolean } | null {
    let i = from;
    for (;;) {
      while (i < this.source.length && /\s|\*/.test(this.source[i]!)) i++;
      if (skipOptions && this.source[i] === '[') {
        const close = this.source.slice(i, i + 2000).indexOf(']');
        if (close === -1) return null;
        i += close + 1;
        continue;
      }
      break;
    }
    if (this.source[i] !== '{') return null;
    let depth = 0;
    // Bounded, so a source full of unclosed groups cannot make the scan quadratic.
    const limit = Math.min(this.source.length, i + max);
    for (let j = i; j < limit; j++) {
      const ch = this.source[j];
      if (ch === '\\') {
        j++;
        continue;
      }
      if (ch === '{') depth++;
      else if (ch === '}' && --depth === 0) return { text: this.source.slice(i + 1, j), start: i, end: j + 1, closed: true };
    }
    return { text: this.source.slice(i + 1, limit), start: i, end: limit, closed: false };
  }
}

function ruleNumber(rule: SecurityRuleId): number {
  return SECURITY_RULES.find((r) => r.id === rule)!.number;
}

function violation(scanner: Scanner, index: number, rule: SecurityRuleId, what: string): SecurityViolation {
  const line = scanner.lineAt(index);
  const number = ruleNumber(rule);
  return { rule, rule_number: number, line, message: `Line ${line}: ${what} is not allowed in templates (rule ${number}: ${rule}).` };
}

function pathProblem(path: string): 'unsafe_path' | 'pipe_input' | null {
  for (const raw of path.split(',')) {
    const part = raw.trim().replace(/^["{]+|["}]+$/g, '').trim();
    if (part.startsWith('|')) return 'pipe_input';
    if (/^[/\\~$]|^[A-Za-z]:|(^|[/\\])\.\.([/\\]|$)|~\/|\\string|\\detokenize|\\csname|\^\^/.test(part)) return 'unsafe_path';
  }
  return null;
}

function csnameContentProblem(content: string): boolean {
  const stripped = content
    .replace(/\\(string|detokenize|noexpand|relax|empty|@empty|unexpanded|expandafter|lowercase|uppercase)\b/g, '')
    .replace(/[\s{}]/g, '');
  if (/\\(?!(the|number|arabic|roman|Roman|alph|Alph|value)\b)[A-Za-z@]/.test(stripped)) return true;
  const letters = stripped.replace(/#\d/g, '\u0000');
  const hasParameter = letters.includes('\u0000');
  const pieces = letters.split('\u0000').filter((piece) => piece !== '');
  // A parameter could supply any name: only a fixed part that fits no guarded name is safe.
  if (hasParameter && pieces.length === 0) return true;
  return GUARDED.some((name) => letters.includes(name) || (hasParameter && pieces.some((piece) => name.includes(piece))));
}

function checkControlSequences(scanner: Scanner): SecurityViolation | null {
  const src = scanner.source;
  const cs = /\\([A-Za-z@]+|.)/gs;
  let letPending = 0;
  let luaCheckedUpTo = 0;
  for (const match of src.matchAll(cs)) {
    const name = match[1]!;
    const index = match.index;
    const after = index + match[0].length;
    const rest = src.slice(after, after + 200);

    if (letPending > 0) {
      letPending--;
      if (letPending === 0 && GUARDED.includes(name)) {
        return violation(scanner, index, 'indirect_command', `\\let to an alias of \\${name}`);
      }
    }
    if (name === 'let' || name === 'futurelet') letPending = name === 'let' ? 2 : 3;

    const forbidden = FORBIDDEN[name];
    if (forbidden) return violation(scanner, index, forbidden, `\\${name}`);

    if (name === 'write') {
      const stream = /^\s*(-?\d+)\b/.exec(rest);
      if (!stream) return violation(scanner, index, 'shell_escape', '\\write without a literal stream number');
      if (Number(stream[1]) === 18) return violation(scanner, index, 'shell_escape', '\\write18');
    }

    if (name === 'csname' || name === 'begincsname' || name === 'ifcsname') {
      const end = scanner.finder.next('\\endcsname', after);
      const closed = end !== -1 && end - after <= ARG_SCAN_LIMIT;
      const content = src.slice(after, closed ? end : after + ARG_SCAN_LIMIT);
      if (!closed || csnameContentProblem(content)) {
        return violation(scanner, index, 'indirect_command', `\\${name} ${content.trim().slice(0, 40)}\\endcsname`);
      }
    }
    if (['@nameuse', 'csuse', 'UseName', 'ExpandArgs', '@namedef', 'csdef', 'csgdef', 'csedef', 'csxdef', 'csletcs', 'cslet', 'letcs'].includes(name)) {
      const arg = scanner.group(after, false);
      if (arg && (!arg.closed || csnameContentProblem(arg.text))) {
        return violation(scanner, index, 'indirect_command', `\\${name}{${arg.text.trim().slice(0, 40)}}`);
      }
    }

    if (FILE_COMMANDS.has(name)) {
      const arg = scanner.group(after);
      let target: string | null = arg && (arg.start - after < 200) ? arg.text : null;
      if (BARE_FILE_PRIMITIVES.has(name)) {
        const bare = /^\s*(\||"|[^\s{\\%])/.exec(rest);
        if (bare && (!arg || arg.start > after + bare[0].length)) target = rest.trim().split(/[\s{}]/)[0] ?? '';
        if (name === 'input' || name === '@@input') {
          if (/^\s*\|/.test(rest) || /^\s*"\s*\|/.test(rest)) return violation(scanner, index, 'pipe_input', `\\${name}|`);
          if (target === null) return violation(scanner, index, 'indirect_command', `\\${name} without a plain file name`);
        }
      }
      if (arg && !arg.closed && target === arg.text) {
        return violation(scanner, index, 'unsafe_path', `\\${name} with an unclosed or over-long file argument`);
      }
      if (target !== null) {
        const problem = pathProblem(target);
        if (problem) return violation(scanner, index, problem, `\\${name}{${target.trim().slice(0, 60)}}`);
      }
      if ((name === 'usepackage' || name === 'RequirePackage') && arg) {
        const packages = arg.text.split(',').map((p) => p.replace(/%.*$/gm, '').trim());
        const shell = packages.find((p) => SHELL_PACKAGES.includes(p));
        if (shell) return violation(scanner, index, 'shell_escape_package', `the package "${shell}" (it needs shell escape)`);
        const link = packages.find((p) => LINK_PACKAGES.includes(p));
        if (link) return violation(scanner, index, 'unsafe_link_action', `the package "${link}" (PDF JavaScript)`);
      }
    }

    if (name === 'usetikzlibrary' || name === 'usepgfplotslibrary' || name === 'tikzset' || name === 'pgfkeys' || name === 'pgfplotsset') {
      const arg = scanner.group(after, false);
      if (arg && (!arg.closed || /(^|[,\s/])external\b/.test(arg.text))) return violation(scanner, index, 'tikz_externalize', `\\${name}{${arg.text.trim().slice(0, 40)}}`);
    }

    if (LUA_COMMANDS.has(name) && after >= luaCheckedUpTo) {
      // Lua code is read whole; what one block covered is not read again for a nested one.
      const arg = scanner.group(after, false, Infinity);
      const code = arg?.text ?? rest;
      luaCheckedUpTo = arg?.end ?? after;
      const problem = luaProblem(code);
      if (problem) return violation(scanner, index, 'dangerous_lua', problem);
    }

    if ((name === 'pdfobj' || name === 'pdfextension') && /^[^{}]{0,100}\bfile\b/.test(rest)) {
      return violation(scanner, index, 'file_read', `\\${name} … file`);
    }

    if (PDF_COMMANDS.has(name)) {
      const action = PDF_ACTIONS.exec(src.slice(after, after + 2000));
      if (action) return violation(scanner, index, 'unsafe_link_action', `the PDF action ${action[0]}`);
    }

    if (name === 'href' || name === 'url' || name === 'nolinkurl' || name === 'hyperref' || name === 'hyperimage') {
      const arg = scanner.group(after);
      if (arg && (!arg.closed || LINK_SCHEMES.test(arg.text))) return violation(scanner, index, 'unsafe_link_action', `a link to "${arg.text.trim().slice(0, 40)}"`);
    }

    if (name === 'begin') {
      const env = scanner.group(after, false, 100);
      if (env) {
        const envName = env.text.trim();
        if (envName === 'filecontents' || envName === 'filecontents*') return violation(scanner, index, 'file_write', `\\begin{${envName}}`);
        if ((envName === 'luacode' || envName === 'luacode*') && env.end >= luaCheckedUpTo) {
          const close = scanner.finder.next(`\\end{${envName}}`, env.end);
          const code = src.slice(env.end, close === -1 ? undefined : close);
          luaCheckedUpTo = close === -1 ? src.length : close;
          const problem = luaProblem(code);
          if (problem) return violation(scanner, index, 'dangerous_lua', problem);
        }
      }
    }
  }
  return null;
}

function checkLiquidFileTags(scanner: Scanner): SecurityViolation | null {
  const tag = /\{%-?\s*(include|render|layout|block)\b/g;
  const found = tag.exec(scanner.source);
  if (found) return violation(scanner, found.index, 'liquid_file_tags', `the Liquid tag "${found[1]}"`);
  let checkedUpTo = 0;
  for (const block of scanner.source.matchAll(/\{%-?\s*liquid\b/g)) {
    if (block.index < checkedUpTo) continue;
    const close = scanner.finder.next('%}', block.index);
    const start = block.index + block[0].length;
    checkedUpTo = close === -1 ? scanner.source.length : close;
    const body = scanner.source.slice(start, checkedUpTo);
    const line = /(^|\n)\s*(include|render|layout|block)\b/.exec(body);
    if (line) return violation(scanner, block.index, 'liquid_file_tags', `the Liquid tag "${line[2]}"`);
  }
  return null;
}

/** The first rule `source` breaks, or null. */
export function findViolation(source: string): SecurityViolation | null {
  const scanner = new Scanner(source);
  const caret = /\^\^/.exec(source);
  if (caret) return violation(scanner, caret.index, 'indirect_command', 'TeX ^^ character notation');
  return checkLiquidFileTags(scanner) ?? checkControlSequences(scanner);
}

/** Throws template_security_violation naming the rule and line. */
export function checkSecurity(source: string): void {
  const found = findViolation(source);
  if (found) {
    throw new ServiceError('template_security_violation', found.message, {
      rule: found.rule,
      rule_number: found.rule_number,
      line: found.line,
    });
  }
}
