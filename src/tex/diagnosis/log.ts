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
const STOP = /^(Emergency stop|==> Fatal error occurred|\s*==> Fatal error occurred)/;

/** Joins lines TeX broke at 79 columns (only when the log looks wrapped). */
export function unwrap(log: string): string[] {
  const lines = log.replace(/\r\n?/g, '\n').split('\n');
  const wrapped = lines.some((l) => l.length === WRAP_WIDTH) && !lines.some((l) => l.length > WRAP_WIDTH);
  if (!wrapped) return lines;
  const out: string[] = [];
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
    // Context pairs run up to the `l.<n>` line (or TeX's `<*>` / `<read ...>` when input ended).
    for (; j < lines.length && j < i + 60; j++) {
      const text = lines[j] ?? '';
      if (errorStart(text) || /^Runaway /.test(text)) break;
      if (text === '' || HELP_LINE.test(text) || /^\s/.test(text) || /^\((\w|-)+\)/.test(text)) continue;
      const next = lines[j + 1] ?? '';
      const rest = /^\s+/.test(next) ? next.trim() : '';
      block.context.push({ read: text, rest });
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
  const text = read.replace(/^l\.\d+ /, '').replace(/^\\\S+ ?->/, '').replace(/ $/, '');
  const cs = /(\\(?:[A-Za-z@]+|.))$/.exec(text);
  if (cs) return cs[1];
  const ch = /(\S)$/u.exec(text);
  return ch?.[1];
}
