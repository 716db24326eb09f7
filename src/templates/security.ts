// The LaTeX security policy of template sources: 14 named rules, checked statically before a
// template is stored and again on every rendered document. Each rule is decided on a normalised
// view of the source (docs/template-policy.md): control-sequence names and the names they pass
// are compared case-folded, since \lowercase and \uppercase can turn any spelling into any
// other; file names, link targets and raw PDF text are read as TeX or a PDF reader would read
// them; and the primitives that build names or re-tokenise text are refused wherever they could
// reach a name a rule forbids. The compile sandbox (no shell escape, no network, confined
// paths) still applies: this is the first of two walls, and it refuses rather than guesses, so
// a rare legitimate construct may need rewriting.
import { errors } from '../errors.js';
import { linkProblem, pathProblem, pdfProblem } from './policy-args.js';
import { EXPANDING_LUA, luaProblem } from './policy-lua.js';
import { ARG_SCAN_LIMIT, Scanner } from './policy-scanner.js';

export const SECURITY_RULES = [
  { number: 1, id: 'shell_escape', title: 'shell-escape primitives (\\write18, \\ShellEscape)' },
  { number: 2, id: 'file_write', title: 'file writes (\\openout, \\newwrite, filecontents)' },
  { number: 3, id: 'file_read', title: 'primitive file reads (\\openin, \\read, \\readline, \\CatchFileDef)' },
  { number: 4, id: 'unsafe_path', title: 'absolute, home or parent paths in a file argument, search-path changes' },
  { number: 5, id: 'pipe_input', title: 'pipe input (\\input|"command")' },
  { number: 6, id: 'shell_escape_package', title: 'packages that need shell escape' },
  { number: 7, id: 'tikz_externalize', title: 'TikZ/PGF externalisation' },
  { number: 8, id: 'catcode_change', title: 'category and case code changes (\\catcode, \\lccode, \\ExplSyntaxOn)' },
  { number: 9, id: 'retokenize', title: 're-tokenising tricks (\\scantokens, \\everyeof, \\endlinechar)' },
  { number: 10, id: 'dangerous_lua', title: 'dangerous Lua in \\directlua or luacode' },
  { number: 11, id: 'file_probe', title: 'file-probing primitives (\\pdffiledump, \\pdfmdfivesum, …)' },
  { number: 12, id: 'unsafe_link_action', title: 'JavaScript, file: and launch actions in links and raw PDF' },
  { number: 13, id: 'liquid_file_tags', title: 'Liquid tags that touch files (include, render, layout)' },
  { number: 14, id: 'indirect_command', title: 'forbidden commands spelled indirectly (\\csname … \\endcsname, ^^, \\let)' },
] as const;

export type SecurityRuleId = (typeof SECURITY_RULES)[number]['id'];

export interface SecurityViolation {
  rule: SecurityRuleId;
  rule_number: number;
  line: number;
  message: string;
}

export interface PolicyOptions {
  /**
   * The text is a rendered document, not a template source: no Liquid placeholder is still to
   * be filled, so a link target is judged as it stands.
   */
  rendered?: boolean;
}

// Every table below is keyed by case-folded name.
const SHELL_PACKAGES = ['shellesc', 'minted', 'pythontex', 'sagetex', 'gnuplottex', 'bashful', 'svg', 'auto-pst-pdf', 'catchfile'];
const LINK_PACKAGES = ['insdljs', 'eforms', 'aeb_pro', 'aebjs', 'media9', 'movie15', 'ocgx2', 'animate'];

/** Control sequences refused outright, with the rule they break. */
const FORBIDDEN: Record<string, SecurityRuleId> = {
  shellescape: 'shell_escape',
  delayedshellescape: 'shell_escape',
  'pdf@system': 'shell_escape',
  openout: 'file_write',
  newwrite: 'file_write',
  newoutputstream: 'file_write',
  openoutputfile: 'file_write',
  openin: 'file_read',
  read: 'file_read',
  readline: 'file_read',
  newread: 'file_read',
  catchfiledef: 'file_read',
  catchfileedef: 'file_read',
  // Image primitives read any file into the PDF; \includegraphics is the way to place images.
  pdfximage: 'file_read',
  saveimageresource: 'file_read',
  xetexpicfile: 'file_read',
  xetexpdffile: 'file_read',
  // Search paths decide where a plain \input{name} is looked for.
  'input@path': 'unsafe_path',
  'ginput@path': 'unsafe_path',
  catcode: 'catcode_change',
  lccode: 'catcode_change',
  uccode: 'catcode_change',
  catcodetable: 'catcode_change',
  initcatcodetable: 'catcode_change',
  savecatcodetable: 'catcode_change',
  luatexcatcodetable: 'catcode_change',
  '@makeother': 'catcode_change',
  explsyntaxon: 'catcode_change',
  providesexplpackage: 'catcode_change',
  providesexplfile: 'catcode_change',
  providesexplclass: 'catcode_change',
  scantokens: 'retokenize',
  scantextokens: 'retokenize',
  luatexscantextokens: 'retokenize',
  everyeof: 'retokenize',
  endlinechar: 'retokenize',
  luacode: 'dangerous_lua',
  endluacode: 'dangerous_lua',
  luacodestar: 'dangerous_lua',
  endluacodestar: 'dangerous_lua',
  pdffiledump: 'file_probe',
  pdfmdfivesum: 'file_probe',
  pdffilesize: 'file_probe',
  pdffilemoddate: 'file_probe',
  filedump: 'file_probe',
  filesize: 'file_probe',
  filemdfivesum: 'file_probe',
  filemoddate: 'file_probe',
  mdfivesum: 'file_probe',
  'pdf@filedump': 'file_probe',
  'pdf@filesize': 'file_probe',
  'pdf@filemdfivesum': 'file_probe',
  'pdf@filemoddate': 'file_probe',
  tikzexternalize: 'tikz_externalize',
  tikzexternaldisable: 'tikz_externalize',
  // hyperref's form buttons run menu items or submit the form.
  acrobatmenu: 'unsafe_link_action',
  submit: 'unsafe_link_action',
  reset: 'unsafe_link_action',
};

/** Commands whose braced (or, for primitives, bare) argument names a file. */
const FILE_COMMANDS = new Set([
  'input', '@@input', '@input', '@iinput', 'include', 'includeonly', 'inputiffileexists', 'iffileexists',
  'includegraphics', 'includepdf', 'includesvg', 'lstinputlisting', 'verbatiminput', 'fvinputfile',
  'inputminted', 'import', 'subimport', 'inputfrom', 'includefrom', 'subinputfrom', 'subincludefrom',
  'graphicspath', 'bibliography', 'addbibresource', 'bibliographystyle', 'usepackage', 'requirepackage',
  'documentclass', 'loadclass', 'pdfximage', 'xetexpicfile', 'xetexpdffile', 'saveimageresource', 'openin',
  'includestandalone', 'externaldocument', 'addglobalbib', 'pgfimage', 'pgfdeclareimage', 'embedfile',
  'attachfile', 'textattachfile', 'noattachfile', 'pgfplotstableread', 'csvreader', 'csvautotabular',
  'csvautobooktabular', 'csvautolongtable', 'csvautobooklongtable', 'dtlloaddb', 'dtlloadrawdb',
  'passoptionstopackage', 'tcbinputlisting', 'inputencoding',
]);
/** File commands whose file is the second argument; both are checked. */
const SECOND_FILE_ARG = new Set(['dtlloaddb', 'dtlloadrawdb', 'passoptionstopackage']);
const BARE_FILE_PRIMITIVES = new Set(['input', '@@input', 'pdfximage', 'xetexpicfile', 'xetexpdffile']);
const PACKAGE_COMMANDS = new Set(['usepackage', 'requirepackage']);

const LUA_COMMANDS = new Set(['directlua', 'latelua', 'luaexec', 'luadirect', 'luacode@execute', 'luacode@dbg@exec', 'lateluafunction']);

const LINK_COMMANDS = new Set(['href', 'url', 'hyperref', 'hyperimage', 'hyperbaseurl']);
/** Commands that write raw PDF, where an action dictionary could hide. */
const PDF_COMMANDS = new Set([
  'pdfannot', 'pdfobj', 'pdfstartlink', 'pdfcatalog', 'pdfnames', 'pdfdest', 'pdfoutline', 'pdfliteral',
  'pdfextension', 'pdfvariable', 'special', 'pdfpageattr', 'pdfpagesattr', 'pdfpageresources', 'pdfinfo',
  'literalps', 'pdfrefobj', 'pdfpagesattributes', 'pdfannotlink',
]);
/** Raw PDF commands that also have keyword-only forms (\pdfobj reserveobjnum, \pdfrefobj n). */
const PDF_KEYWORD_FORMS = new Set(['pdfobj', 'pdfextension', 'pdfvariable', 'pdfrefobj']);
/** Key-value commands whose values can carry raw PDF (hyperref's pdfopenaction and friends). */
const PDF_OPTION_COMMANDS = new Set(['hypersetup', 'usepackage', 'requirepackage', 'passoptionstopackage', 'documentclass', 'atbeginshipout', 'addtohook']);
/** hyperref keys whose values become PDF text strings (escaped by hyperref), not raw PDF. */
const PDF_STRING_KEYS =
  /\b(pdftitle|pdfauthor|pdfsubject|pdfkeywords|pdfcreator|pdfproducer|pdfcopyright|pdflicenseurl|pdfcaptionwriter|pdfmetalang|pdflang|pdfcontact[a-z]*|pdfpubtype|pdfdate|pdfurl|pdfidentifier|pdfsource|pdfdocumentid|pdfinstanceid|pdfversionid|pdfrendition)\s*=\s*(\{(?:\\.|[^{}\\]|\{(?:\\.|[^{}\\]|\{(?:\\.|[^{}\\])*\})*\})*\}|[^,\]]*)/gis;
/** hyperref form fields: their on… and format/validate/calculate/keystroke keys hold JavaScript. */
const FORM_FIELDS = new Set(['pushbutton', 'textfield', 'checkbox', 'choicemenu']);
const FORM_SCRIPT_KEYS = /(?:^|[,\s[{])(on[a-z]+|format|validate|calculate|keystroke)\s*=/i;

const LET_LIKE: Record<string, number> = {
  let: 2, futurelet: 3, glet: 2, newcommandcopy: 2, renewcommandcopy: 2, declarecommandcopy: 2, letltxmacro: 2,
  cslet: 1, gcslet: 1,
};
const NAME_TAKING = new Set(['@nameuse', 'csuse', 'usename', 'expandargs', '@namedef', 'csdef', 'csgdef', 'csedef', 'csxdef', 'csletcs', 'cslet', 'letcs', 'ifcsdef', 'ifcsundef', 'csname@', 'begincsname@']);

/** Every name a rule looks at: building one of these indirectly (\csname, \let) is refused. */
const GUARDED = [
  ...new Set([
    'write', 'immediate', 'special', 'pdfobj', 'pdfannot', 'csname', 'endcsname', 'begin', 'lowercase', 'uppercase',
    ...Object.keys(FORBIDDEN), ...FILE_COMMANDS, ...LUA_COMMANDS, ...LINK_COMMANDS, ...PDF_COMMANDS, ...PDF_OPTION_COMMANDS,
    ...FORM_FIELDS, ...Object.keys(LET_LIKE), ...NAME_TAKING,
  ]),
];

function ruleNumber(rule: SecurityRuleId): number {
  return SECURITY_RULES.find((r) => r.id === rule)!.number;
}

function violation(scanner: Scanner, index: number, rule: SecurityRuleId, what: string): SecurityViolation {
  const line = scanner.lineAt(index);
  const number = ruleNumber(rule);
  // One line: a quoted argument may span several.
  const shown = what.replace(/\s+/g, ' ');
  return { rule, rule_number: number, line, message: `Line ${line}: ${shown} is not allowed in templates (rule ${number}: ${rule}).` };
}

/** True when a name built by \csname (or \@nameuse…) from `content` could be one a rule guards. */
function csnameContentProblem(content: string): boolean {
  const stripped = content
    .replace(/\\(string|detokenize|noexpand|relax|empty|@empty|unexpanded|expandafter|lowercase|uppercase)\b/gi, '')
    .replace(/[\s{}]/g, '');
  // Any other macro or control symbol could supply any text.
  if (/\\(?!(the|number|arabic|roman|alph|value)\b)([A-Za-z@]|[^A-Za-z@])/i.test(stripped)) return true;
  // Names with _ or : are the programming layer's (\iow_open:Nn, \sys_shell_now:n, \file_get:nnN).
  if (/[_:]/.test(stripped)) return true;
  const letters = stripped.toLowerCase().replace(/#\d/g, '\u0000');
  const hasParameter = letters.includes('\u0000');
  const pieces = letters.split('\u0000').filter((piece) => piece !== '');
  // A parameter could supply any name: only a fixed part that fits no guarded name is safe.
  if (hasParameter && pieces.length === 0) return true;
  return GUARDED.some((name) => letters.includes(name) || (hasParameter && pieces.some((piece) => name.includes(piece))));
}

/** The text from `after` up to the end of the argument groups of a raw PDF command. */
function pdfWindow(scanner: Scanner, after: number): { text: string; hasGroup: boolean; end: number } {
  let at = after;
  let hasGroup = false;
  for (let groups = 0; groups < 4; groups++) {
    const between = /^(?:[\sA-Za-z0-9.=*-]|\[[^\]]{0,200}\]|\\pdflast[a-z]+|\\the|\\number)*/.exec(scanner.source.slice(at, at + 400))![0];
    if (scanner.source[at + between.length] !== '{') break;
    const group = scanner.group(at + between.length, false);
    if (!group) break;
    hasGroup = true;
    at = group.end;
  }
  const end = hasGroup ? at : Math.min(scanner.source.length, after + 200);
  return { text: scanner.source.slice(after, end), hasGroup, end };
}

function checkControlSequences(scanner: Scanner, options: PolicyOptions): SecurityViolation | null {
  const src = scanner.source;
  const cs = /\\([A-Za-z@]+|.)/gs;
  let letPending = 0;
  let luaCheckedUpTo = 0;
  let pdfCheckedUpTo = 0;
  // Only the rarer checks look ahead; slicing for every token would dominate the scan.
  const restAt = (at: number): string => src.slice(at, at + 200);
  const checkTeX = (tex: string): string | null => {
    const inner = checkControlSequences(new Scanner(tex), { rendered: true });
    return inner ? inner.message.replace(/^Line \d+: /, '').replace(/ is not allowed.*$/, '') : null;
  };
  for (const match of src.matchAll(cs)) {
    const written = match[1]!;
    const name = written.toLowerCase();
    const index = match.index;
    const after = index + match[0].length;
    // Without \makeatletter, \read@x is \read followed by "@x": the part before @ counts too.
    const stem = name.includes('@') && !name.startsWith('@') ? name.slice(0, name.indexOf('@')) : name;

    if (letPending > 0) {
      letPending--;
      if (letPending === 0 && GUARDED.includes(name)) {
        return violation(scanner, index, 'indirect_command', `\\let to an alias of \\${written}`);
      }
    }
    if (Object.hasOwn(LET_LIKE, name)) letPending = LET_LIKE[name]!;

    // Own keys only: `\constructor` must not find Object.prototype.constructor.
    const forbidden = Object.hasOwn(FORBIDDEN, name) ? FORBIDDEN[name] : Object.hasOwn(FORBIDDEN, stem) ? FORBIDDEN[stem] : undefined;
    if (forbidden) return violation(scanner, index, forbidden, `\\${written}`);

    if (name === 'write' || stem === 'write') {
      // TeX keeps reading digits through expansion (\write1\number8 is stream 18), so the number
      // must end at a blank, a brace or \relax.
      const stream = name === 'write' ? /^\s*(-?\d+)(?=\s|\{|\\relax\b)/.exec(restAt(after)) : null;
      if (!stream) return violation(scanner, index, 'shell_escape', '\\write without a literal stream number');
      if (Number(stream[1]) === 18) return violation(scanner, index, 'shell_escape', '\\write18');
    }

    if (name === 'csname' || name === 'begincsname' || name === 'ifcsname') {
      const end = scanner.finder.next('\\endcsname', after);
      const closed = end !== -1 && end - after <= ARG_SCAN_LIMIT;
      const content = src.slice(after, closed ? end : after + ARG_SCAN_LIMIT);
      if (!closed || csnameContentProblem(content)) {
        return violation(scanner, index, 'indirect_command', `\\${written} ${content.trim().slice(0, 40)}\\endcsname`);
      }
    }
    if (NAME_TAKING.has(name)) {
      const arg = scanner.group(after, false);
      if (!arg || !arg.closed || csnameContentProblem(arg.text)) {
        return violation(scanner, index, 'indirect_command', `\\${written}{${(arg?.text ?? restAt(after)).trim().slice(0, 40)}}`);
      }
    }

    if (FILE_COMMANDS.has(name)) {
      const found = checkFileCommand(scanner, name, written, index, after, restAt(after), options);
      if (found) return found;
    }

    if (name === 'addplot' || name === 'addplot3') {
      // \addplot table {file} and \addplot file {file} read data files.
      const source = /^\+?\s*(?:\[[^\]]{0,300}\]\s*)?(table|file)\b\s*(?:\[[^\]]{0,300}\]\s*)?/.exec(restAt(after));
      if (source) {
        const arg = scanner.group(after + source[0].length, false);
        const problem = arg ? pathProblem(arg.text, { allowRowBreaks: true }) : { rule: 'unsafe_path' as const, what: 'a data file given indirectly' };
        if (problem) return violation(scanner, index, problem.rule, `\\${written} ${source[1]} with ${problem.what}`);
      }
    }

    if (name === 'usetikzlibrary' || name === 'usepgfplotslibrary' || name === 'tikzset' || name === 'pgfkeys' || name === 'pgfplotsset') {
      const arg = scanner.group(after, false);
      if (arg && (!arg.closed || /(^|[,\s/])external\b/i.test(arg.text))) return violation(scanner, index, 'tikz_externalize', `\\${written}{${arg.text.trim().slice(0, 40)}}`);
    }

    if (LUA_COMMANDS.has(name) && after >= luaCheckedUpTo) {
      // Lua code is read whole; what one block covered is not read again for a nested one.
      const arg = scanner.group(after, false, Infinity);
      if (!arg || arg.start - after > 40) return violation(scanner, index, 'dangerous_lua', `\\${written} without its code written out`);
      luaCheckedUpTo = arg.end;
      const problem = luaProblem(arg.text, EXPANDING_LUA.has(name), checkTeX);
      if (problem) return violation(scanner, index, 'dangerous_lua', problem);
    }

    if ((name === 'pdfobj' || name === 'pdfextension') && /^[^{}]{0,100}\bfile\b/i.test(restAt(after))) {
      return violation(scanner, index, 'file_read', `\\${written} … file`);
    }

    if (PDF_COMMANDS.has(name) && after >= pdfCheckedUpTo) {
      const window = pdfWindow(scanner, after);
      if (!window.hasGroup && !PDF_KEYWORD_FORMS.has(name)) {
        return violation(scanner, index, 'unsafe_link_action', `\\${written} without its PDF text written out`);
      }
      pdfCheckedUpTo = window.end;
      if (name === 'special' && /\b(fstream|image|epdf)\b/i.test(window.text)) {
        return violation(scanner, index, 'file_read', `\\special that reads a file (${/\b(fstream|image|epdf)\b/i.exec(window.text)![0]})`);
      }
      const problem = pdfProblem(window.text, { literal: true, uris: true });
      if (problem) return violation(scanner, index, 'unsafe_link_action', problem);
    }

    if (PDF_OPTION_COMMANDS.has(name)) {
      const options = /^\s*(\[[^\]]{0,2000}\])/.exec(src.slice(after, after + 2100));
      const arg = scanner.group(after);
      const text = `${options?.[1] ?? ''}${arg?.text ?? ''}`.replace(PDF_STRING_KEYS, '');
      const problem = pdfProblem(text, { literal: false, uris: false });
      if (problem) return violation(scanner, index, 'unsafe_link_action', problem);
      if (name === 'hypersetup' && !arg) return violation(scanner, index, 'unsafe_link_action', '\\hypersetup without its options written out');
    }

    if (FORM_FIELDS.has(name)) {
      const options = /^\s*\[((?:[^[\]]|\[[^\]]*\]){0,2000})\]/.exec(src.slice(after, after + 2100));
      if (options && FORM_SCRIPT_KEYS.test(options[1]!)) {
        return violation(scanner, index, 'unsafe_link_action', `a form field with JavaScript (${FORM_SCRIPT_KEYS.exec(options[1]!)![1]}=)`);
      }
    }

    // \hyperref[label]{text} is an internal link; only \hyperref{url}{…}{…}{…} has a target.
    if (LINK_COMMANDS.has(name) && !(name === 'hyperref' && /^\s*\[/.test(restAt(after)))) {
      const arg = scanner.group(after, name !== 'hyperref');
      if (!arg || !arg.closed || arg.start - after > 40) {
        return violation(scanner, index, 'unsafe_link_action', `\\${written} without its target written out`);
      }
      const liquidPending = !options.rendered && /\{\{|\{%/.test(arg.text);
      const problem = linkProblem(arg.text, name, { liquidPending });
      if (problem) return violation(scanner, index, 'unsafe_link_action', problem);
    }

    if (name === 'begin') {
      const env = scanner.group(after, false, 100);
      if (!env || env.start - after > 40 || /\\/.test(env.text)) return violation(scanner, index, 'indirect_command', '\\begin without a written environment name');
      const envName = env.text.trim().toLowerCase();
      if (envName === 'filecontents' || envName === 'filecontents*') return violation(scanner, index, 'file_write', `\\begin{${env.text.trim()}}`);
      if ((envName === 'luacode' || envName === 'luacode*') && env.end >= luaCheckedUpTo) {
        const close = scanner.finder.next(`\\end{${env.text.trim()}}`, env.end);
        const code = src.slice(env.end, close === -1 ? undefined : close);
        luaCheckedUpTo = close === -1 ? src.length : close;
        const problem = luaProblem(code, envName === 'luacode', checkTeX);
        if (problem) return violation(scanner, index, 'dangerous_lua', problem);
      }
    }
  }
  return null;
}

/** In a template source, a Liquid placeholder's value is judged when the document is rendered. */
function withoutLiquid(text: string, options: PolicyOptions): string {
  return options.rendered ? text : text.replace(/\{\{[\s\S]*?\}\}|\{%[\s\S]*?%\}/g, 'liquid');
}

function checkFileCommand(
  scanner: Scanner,
  name: string,
  written: string,
  index: number,
  after: number,
  rest: string,
  options: PolicyOptions,
): SecurityViolation | null {
  const arg = scanner.group(after);
  // The file argument comes right after the command and its options (an image's alt text may be long).
  let target: string | null = arg && arg.start - after - arg.options < 200 ? arg.text : null;
  if (BARE_FILE_PRIMITIVES.has(name)) {
    const bare = /^\s*(\||"|[^\s{\\%])/.exec(rest);
    if (bare && (!arg || arg.start > after + bare[0].length)) target = rest.trim().split(/[\s{}]/)[0] ?? '';
    if (name === 'input' || name === '@@input') {
      if (/^\s*\|/.test(rest) || /^\s*"\s*\|/.test(rest)) return violation(scanner, index, 'pipe_input', `\\${written}|`);
      if (target === null || target.trim() === '') return violation(scanner, index, 'indirect_command', `\\${written} without a plain file name`);
    }
  }
  // A file command whose argument is not written out (\def\x{\includegraphics}) could be given any name.
  if (target === null) return violation(scanner, index, 'indirect_command', `\\${written} without its file argument written out`);
  if (arg && !arg.closed && target === arg.text) {
    return violation(scanner, index, 'unsafe_path', `\\${written} with an unclosed or over-long file argument`);
  }
  const targets = [target];
  if (SECOND_FILE_ARG.has(name) && arg) {
    const second = scanner.group(arg.end, false);
    if (!second || second.start - arg.end > 40) return violation(scanner, index, 'indirect_command', `\\${written} without its file argument written out`);
    targets.push(second.text);
  }
  for (const text of targets) {
    const problem = pathProblem(withoutLiquid(text, options));
    if (problem) return violation(scanner, index, problem.rule, `\\${written}{${text.trim().slice(0, 60)}} (${problem.what})`);
  }
  if (PACKAGE_COMMANDS.has(name) && arg) {
    const packages = arg.text.replace(/%.*$/gm, '').split(',').map((p) => p.trim().toLowerCase());
    const shell = packages.find((p) => SHELL_PACKAGES.includes(p));
    if (shell) return violation(scanner, index, 'shell_escape_package', `the package "${shell}" (it needs shell escape or reads files)`);
    const link = packages.find((p) => LINK_PACKAGES.includes(p));
    if (link) return violation(scanner, index, 'unsafe_link_action', `the package "${link}" (PDF JavaScript)`);
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
export function findViolation(source: string, options: PolicyOptions = {}): SecurityViolation | null {
  const scanner = new Scanner(source);
  const caret = /\^\^/.exec(source);
  if (caret) return violation(scanner, caret.index, 'indirect_command', 'TeX ^^ character notation');
  return checkLiquidFileTags(scanner) ?? checkControlSequences(scanner, options);
}

/** Throws template_security_violation naming the rule and line. */
export function checkSecurity(source: string, options: PolicyOptions = {}): void {
  const found = findViolation(source, options);
  if (found) {
    throw errors.template_security_violation(found.message, {
      rule: found.rule,
      rule_number: found.rule_number,
      line: found.line,
    });
  }
}
