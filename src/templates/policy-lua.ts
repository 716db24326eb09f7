// Rule 10 (dangerous_lua): what Lua code in \directlua, \latelua, \luaexec, \luadirect and the
// luacode environments may do. Judged on a normalised view: comments removed, string literals
// taken apart from code, identifiers compared case-insensitively (\lowercase{\directlua{OS.…}}
// runs os.…), and every library that reaches files, processes, PDF objects or the tokenizer
// refused by name wherever it appears, so an alias (`local l = lfs`) is refused where it is made.

/** Libraries and functions that reach the host, the PDF or the tokenizer, or build code. */
const FORBIDDEN_IDENTIFIERS =
  /(?<![\w.])(os|io|debug|package|lfs|socket|ffi|kpse|status|mime|ltn12|url|http|callback|pdfe|epdf|img|mplib|fontloader|lua|texconfig|pdf|node|sio|fio|zip|gzip|zlib|luatexbase|luatex|token|require|load|loadstring|loadfile|dofile|getfenv|setfenv|rawget|rawset|rawequal|newproxy|setmetatable|getmetatable|collectgarbage|module|_g|_env)(?!\w)/i;

/** Parts of `tex` that re-tokenise, change codes or make primitives reachable by other names. */
const FORBIDDEN_TEX_FIELDS =
  /(?<![\w.])tex\s*(?:\.\s*(runtoks|scantoks|setcatcode|getcatcode|catcode|cprint|setlccode|getlccode|lccode|setuccode|getuccode|uccode|settoks|toks|gettoks|enableprimitives|extraprimitives|primitives|set_macro|definefont|run\w*)\b|\[)|(?<![\w.])tex(?!\s*\.)(?!\w)/i;

/**
 * Ways to make characters from numbers or to reach a string function under another name:
 * string.char(92) is a backslash that no literal shows.
 */
const CHARACTER_BUILDERS =
  /[.:]\s*(char|reverse|dump|format)(?!\w)|(?<![\w.])(string|utf8|unicode)(?!\s*[.:])(?!\w)|(\)|"")\s*\[|\[\s*""|\[[^\]]*\.\./i;

/** Functions that turn text into other text; with a backslash around, they can build a command. */
const TEXT_BUILDERS = /[.:]\s*(gsub|sub|rep|upper|lower|byte|concat)(?!\w)/i;

/** Where TeX expands the code first, so a macro or active character could hide any code. */
export const EXPANDING_LUA = new Set(['directlua', 'latelua', 'luaexec', 'luadirect', 'luacode@execute', 'luacode@dbg@exec']);

interface Parsed {
  /** The code with comments and string literals blanked out. */
  code: string;
  /** The decoded contents of each string literal, in order. */
  strings: string[];
  /** A string escape that spells characters by number (\92, \x5c, \u{5c}, \z). */
  numericEscape: string | null;
}

function parseLua(source: string): Parsed {
  const strings: string[] = [];
  let code = '';
  let numericEscape: string | null = null;
  let i = 0;
  while (i < source.length) {
    const ch = source[i]!;
    const long = /^\[(=*)\[/.exec(source.slice(i, i + 64));
    if (source.startsWith('--', i)) {
      const block = /^--\[(=*)\[/.exec(source.slice(i, i + 64));
      const end = block ? source.indexOf(`]${block[1]}]`, i) : source.indexOf('\n', i);
      i = end === -1 ? source.length : end + (block ? block[1]!.length + 2 : 0);
      code += ' ';
      continue;
    }
    if (long) {
      const close = `]${long[1]}]`;
      const end = source.indexOf(close, i + long[0].length);
      const stop = end === -1 ? source.length : end;
      strings.push(source.slice(i + long[0].length, stop));
      i = end === -1 ? source.length : end + close.length;
      code += ' "" ';
      continue;
    }
    if (ch === '"' || ch === "'") {
      let text = '';
      let j = i + 1;
      for (; j < source.length && source[j] !== ch && source[j] !== '\n'; j++) {
        if (source[j] === '\\') {
          const escape = /^\\(\d{1,3}|x[0-9a-fA-F]{2}|u\{[0-9a-fA-F]+\}|z)/.exec(source.slice(j, j + 12));
          if (escape) numericEscape ??= escape[0];
          const next = source[j + 1] ?? '';
          text += ({ n: '\n', t: '\t', r: '\r' } as Record<string, string>)[next] ?? next;
          j++;
          continue;
        }
        text += source[j];
      }
      strings.push(text);
      i = j + 1;
      code += ' "" ';
      continue;
    }
    code += ch;
    i++;
  }
  return { code, strings, numericEscape };
}

/** A control-sequence name cut off at the end of a piece of text ("\\wri"), or null. */
function danglingName(text: string): string | null {
  let last: RegExpExecArray | null = null;
  const cs = /\\([A-Za-z@]*)/g;
  for (let m = cs.exec(text); m; m = cs.exec(text)) {
    if (m[1] === '' && text[cs.lastIndex] !== undefined) cs.lastIndex++; // a control symbol
    last = m;
  }
  if (!last || last.index + last[0].length !== text.length) return null;
  return last[1]!;
}

/**
 * Why Lua code is refused, or null. `checkTeX` judges TeX the code prints (its strings, joined
 * and one by one); `expanding` says TeX expands the code before Lua sees it.
 */
export function luaProblem(source: string, expanding: boolean, checkTeX: (tex: string) => string | null): string | null {
  if (expanding) {
    // \string only prints characters; \luaescapestring right after a quote fills a string
    // literal. Any other macro (even after \number, which stops at the first non-digit), and
    // the active ~, could expand to code never seen here.
    const visible = source
      .replace(/\\\\/g, 'S')
      .replace(/\\string\s*(?:\\(?:[A-Za-z@]+|.)|.)/gs, 'S')
      .replace(/(["'])\\(?:luatex)?luaescapestring\s*\{(?:[^{}]|\{[^{}]*\})*\}/g, '$1S');
    const hidden = /\\[A-Za-z@]+|~/.exec(visible);
    if (hidden) return `Lua code with ${hidden[0] === '~' ? 'the active character ~' : `the macro ${hidden[0]}`} (TeX expands it first)`;
  }
  const parsed = parseLua(source);
  if (parsed.numericEscape) return `Lua code spelling characters by number (${parsed.numericEscape})`;
  const library = FORBIDDEN_IDENTIFIERS.exec(parsed.code);
  if (library) return `Lua code using ${library[1]}`;
  const texField = FORBIDDEN_TEX_FIELDS.exec(parsed.code);
  if (texField) return `Lua code using ${texField[0].trim()}`;
  const characters = CHARACTER_BUILDERS.exec(parsed.code);
  if (characters) return `Lua code building characters or reaching string functions indirectly (${characters[0].trim()})`;
  const printsTeX = parsed.strings.some((text) => text.includes('\\'));
  if (printsTeX) {
    const builder = TEXT_BUILDERS.exec(parsed.code);
    if (builder) return `Lua code rewriting text that holds TeX commands (${builder[0].trim()})`;
    for (const text of parsed.strings) {
      const dangling = danglingName(text);
      if (dangling !== null) return `Lua code printing a command name cut in pieces ("\\${dangling}")`;
    }
    const expl = /\\[A-Za-z@]+[_:][A-Za-z]/.exec(parsed.strings.join('\n'));
    if (expl) return `Lua code printing the programming-layer name ${expl[0]}`;
    for (const text of [parsed.strings.join(''), ...parsed.strings]) {
      const inner = checkTeX(text);
      if (inner) return `Lua code printing ${inner}`;
    }
  }
  return null;
}
