// What a compiled document could still fix, listed under the source: the TeX errors the PDF was
// made despite (on_error "continue") and the warnings every success carries, each with a way to
// its line in the studio's source (main.tex; a line of another file is only named).
import type { Json } from './api';
import { h } from './dom';

interface Problem {
  message: string;
  file: string | undefined;
  line: number | undefined;
  fix: string | undefined;
}

function problems(value: unknown): Problem[] {
  if (!Array.isArray(value)) return [];
  return value
    .filter((p): p is Json => typeof p === 'object' && p !== null && typeof (p as Json).message === 'string')
    .map((p) => ({
      message: String(p.message),
      file: typeof p.file === 'string' ? p.file : undefined,
      line: typeof p.line === 'number' ? p.line : undefined,
      fix: typeof p.fix === 'string' ? p.fix : undefined,
    }));
}

const plural = (n: number, one: string) => `${n} ${one}${n === 1 ? '' : 's'}`;

/** The section's content for a success body; empty when it has neither errors nor warnings. */
export function problemNodes(res: Json, goToLine: (line: number) => void): Node[] {
  const errors = problems(res.errors);
  const warnings = problems(res.warnings);
  const item = (p: Problem) => {
    const inSource = p.line !== undefined && (p.file === undefined || p.file === 'main.tex');
    const where = p.line !== undefined ? ` (${p.file ?? 'main.tex'}, line ${p.line})` : p.file ? ` (${p.file})` : '';
    return h(
      'li',
      {},
      `${p.message}${where}`,
      p.fix ? h('span', { class: 'problem-fix' }, ` Fix: ${p.fix}`) : null,
      inSource ? h('button', { type: 'button', class: 'button small', onclick: () => goToLine(p.line!) }, `Go to line ${p.line}`) : null,
    );
  };
  const groups: Array<[string, string, Problem[]]> = [
    ['problem-errors', `Compiled despite ${plural(errors.length, 'TeX error')}`, errors],
    ['problem-warnings', plural(warnings.length, 'warning'), warnings],
  ];
  const nodes: Node[] = [];
  for (const [id, title, list] of groups) {
    if (list.length === 0) continue;
    nodes.push(h('h3', nodes.length === 0 ? { id: 'problems-title' } : {}, title), h('ul', { id, class: 'problem-list' }, ...list.map(item)));
  }
  return nodes;
}
