// Splits a TeX log into error blocks: the message, the context lines TeX printed under it and
// the line it names. Works on logs written with -file-line-error and unwrapped lines, and on
// classic `! ...` logs wrapped at 79 columns.

export interface ContextLine {
  /** What TeX had read at this level (the first half of the pair TeX prints). */
  read: string;
  /** What was still to come (the second, indented half). */
  rest: string;
}

export interface ErrorBlock {
  /** The message, continuation lines joined with single spaces. */
  message: string;
  /** File named by -file-line-error, as printed (e.g. `./main.tex`). */
  file?: string;
  /** Line from -file-line-error, or from the `l.<n>` context line. */
  line?: number;
  /** Context pairs from innermost to the `l.<n>` line. */
  context: ContextLine[];
  /** Text of `Runaway argument?` (or definition/text) printed just before the error. */
  runaway?: string;
  /** Index of the first log line of this block. */
  at: number;
}

const WRAP_WIDTH = 79;
const FILE_LINE = /^((?:\.{1,2}\/|\/)?[^\s:()][^:()]*?\.[A-Za-z0-9]{1,4}):(\d+): (.*)$/;
const HELP_LINE = /^(See the (LaTeX|.*) (manual|documentation)|Type {1,2}H <return>|Type X to quit|or enter new name|Enter file name:|Type <return> to continue|You're in trouble here|Try typing|Here is how much|\(That was another|\(Press Enter)/;
const CONTEXT_START = /^(l\.\d+ |<[a-z* ]+>|<read [^>]*>|\\\S+ *\S*->| ?\.\.\.)/;
const STOP = /^(Emergency stop|==> Fatal error occurred|\s*==> Fatal error occurred)/;

/** Joins lines TeX broke at 79 columns (only when the log looks wrapped). */
export function unwrap(log: string): string[] {
  const lines = log.replace(/\r\n?/g, '\n').split('\n');
  // The banner ("This is pdfTeX, ...") is written before wrapping applies.
  const wrapped = lines.some((l) => l.length === WRAP_WIDTH) && !lines.some((l, i) => i > 0 && l.length > WRAP_WIDTH);
  if (!wrapped) return lines;
  const out: string[] = lines.length > 0 && (lines[0]?.length ?? 0) > WRAP_WIDTH ? [lines.shift() ?? ''] : [];
  let current = '';
  for (const line of lines) {
    current += line;
    if (line.length !== WRAP_WIDTH) {
      out.push(current);
      current = '';
    }
  }
  if (current) out.push(current);
  return out;
}

function errorStart(line: string): { message: string; file?: string; line?: number } | undefined {
  const fl = FILE_LINE.exec(line);
  if (fl) return { file: fl[1], line: Number(fl[2]), message: fl[3] ?? '' };
  if (line.startsWith('! ')) return { message: line.slice(2) };
  // Engine errors outside TeX's error routine: "!pdfTeX error: pdflatex (file tcrm1095): Font ...".
  if (/^!(pdfTeX|LuaTeX|XeTeX|xdvipdfmx)? ?error/i.test(line)) return { message: line.slice(1) };
  return undefined;
}

export function isStop(block: ErrorBlock): boolean {
  return STOP.test(block.message.trim());
}

export function parseErrors(log: string): ErrorBlock[] {
  const lines = unwrap(log);
  const blocks: ErrorBlock[] = [];
  for (let i = 0; i < lines.length; i++) {
    const start = errorStart(lines[i] ?? '');
    if (!start) continue;
    const block: ErrorBlock = { message: start.message.trim(), file: start.file, line: start.line, context: [], at: i };
    const previous = lines[i - 2];
    if (previous !== undefined && /^Runaway (argument|definition|text|preamble)\?/.test(previous)) {
      block.runaway = lines[i - 1];
    }
    let j = i + 1;
    // Messages of LaTeX and package errors continue on indented or "(pkg)" lines.
    if (/Error/.test(block.message)) {
      while (j < lines.length && /^(\s+\S|\([\w-]+\)\s+\S)/.test(lines[j] ?? '')) {
        block.message += ' ' + (lines[j] ?? '').replace(/^\([\w-]+\)/, '').trim();
        j++;
      }
    }
    // Context: TeX prints two lines per level (what was read, then what is still to come;
    // pdfTeX indents the second, LuaTeX not always), ending with the `l.<n>` level.
    const firstContext = j;
    for (; j < lines.length && j < i + 80; j++) {
      const text = lines[j] ?? '';
      if (errorStart(text) || /^Runaway /.test(text) || HELP_LINE.test(text)) {
        if (/^Here is how much/.test(text)) break;
        if (errorStart(text) || /^Runaway /.test(text)) break;
        continue;
      }
      if (!CONTEXT_START.test(text) && !(j === firstContext && text !== '')) continue;
      const rest = (lines[j + 1] ?? '').trim();
      block.context.push({ read: text, rest });
      j++;
      const lineNo = /^l\.(\d+) /.exec(text + ' ');
      if (lineNo) {
        block.line ??= Number(lineNo[1]);
        break;
      }
      if (/^<\*>|^<read/.test(text)) break;
    }
    blocks.push(block);
    i = j - 1;
  }
  return blocks;
}

/** The first real error: `Emergency stop` and `Fatal error occurred` only when nothing precedes them. */
export function primaryError(blocks: ErrorBlock[]): ErrorBlock | undefined {
  return blocks.find((b) => !isStop(b)) ?? blocks[0];
}

/** The token TeX had just read at a context level: a control sequence or a single character. */
export function lastToken(read: string): string | undefined {
  const text = read.replace(/^l\.\d+ /, '').replace(/^\\\S+ *\S*->/, '').replace(/ +$/, '');
  const cs = /(\\(?:[A-Za-z@]+|.))$/.exec(text);
  if (cs) return cs[1];
  const ch = /(\S)$/u.exec(text);
  return ch?.[1];
}

/** Like lastToken, but skips the {...} arguments that end the text: `\frac{1}{2}` gives `\frac`. */
export function commandBefore(read: string): string | undefined {
  let text = read.replace(/ $/, '');
  for (;;) {
    if (!text.endsWith('}')) break;
    let depth = 0;
    let k = text.length - 1;
    for (; k >= 0; k--) {
      const ch = text[k];
      if (ch === '}' && text[k - 1] !== '\\') depth++;
      else if (ch === '{' && text[k - 1] !== '\\') depth--;
      if (depth === 0) break;
    }
    if (k < 0) break;
    text = text.slice(0, k).replace(/\s+$/, '');
  }
  const token = lastToken(text);
  return token?.startsWith('\\') ? token : lastToken(read);
}
