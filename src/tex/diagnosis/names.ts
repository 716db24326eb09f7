// Names LaTeX defines itself, the classes installed here, and a strict nearest-name match used
// to point out typos. A typo is only suggested when exactly one name is that close.

export const KERNEL_COMMANDS = [
  'textbf', 'textit', 'texttt', 'textsf', 'textrm', 'textsc', 'textsl', 'textup', 'textmd', 'textnormal', 'emph',
  'underline', 'footnote', 'footnotemark', 'footnotetext', 'section', 'subsection', 'subsubsection', 'paragraph',
  'subparagraph', 'chapter', 'part', 'label', 'ref', 'pageref', 'cite', 'nocite', 'bibliography',
  'bibliographystyle', 'caption', 'centering', 'raggedright', 'raggedleft', 'includeonly', 'input', 'include',
  'maketitle', 'title', 'author', 'date', 'thanks', 'today', 'tableofcontents', 'listoffigures', 'listoftables',
  'newpage', 'clearpage', 'cleardoublepage', 'pagebreak', 'linebreak', 'newline', 'noindent', 'indent', 'par',
  'vspace', 'hspace', 'vfill', 'hfill', 'smallskip', 'medskip', 'bigskip', 'quad', 'qquad', 'item', 'hline',
  'cline', 'multicolumn', 'frac', 'sqrt', 'sum', 'prod', 'int', 'oint', 'lim', 'limsup', 'liminf', 'sup', 'inf',
  'max', 'min', 'log', 'ln', 'exp', 'sin', 'cos', 'tan', 'cot', 'sec', 'csc', 'arcsin', 'arccos', 'arctan',
  'sinh', 'cosh', 'tanh', 'det', 'dim', 'ker', 'deg', 'gcd', 'arg', 'Pr', 'hom', 'alpha', 'beta', 'gamma', 'delta',
  'epsilon', 'varepsilon', 'zeta', 'eta', 'theta', 'vartheta', 'iota', 'kappa', 'lambda', 'mu', 'nu', 'xi',
  'pi', 'varpi', 'rho', 'varrho', 'sigma', 'varsigma', 'tau', 'upsilon', 'phi', 'varphi', 'chi', 'psi', 'omega',
  'Gamma', 'Delta', 'Theta', 'Lambda', 'Xi', 'Pi', 'Sigma', 'Upsilon', 'Phi', 'Psi', 'Omega', 'infty', 'partial',
  'nabla', 'forall', 'exists', 'emptyset', 'in', 'notin', 'subset', 'subseteq', 'supset', 'supseteq', 'cup',
  'cap', 'setminus', 'times', 'cdot', 'cdots', 'ldots', 'vdots', 'ddots', 'dots', 'leq', 'geq', 'neq', 'approx',
  'equiv', 'sim', 'simeq', 'cong', 'propto', 'pm', 'mp', 'div', 'ast', 'star', 'circ', 'bullet', 'oplus',
  'otimes', 'rightarrow', 'leftarrow', 'leftrightarrow', 'Rightarrow', 'Leftarrow', 'Leftrightarrow', 'mapsto',
  'to', 'gets', 'iff', 'uparrow', 'downarrow', 'langle', 'rangle', 'lfloor', 'rfloor', 'lceil', 'rceil', 'left',
  'right', 'big', 'Big', 'bigg', 'Bigg', 'mathrm', 'mathbf', 'mathit', 'mathsf', 'mathtt', 'mathcal', 'mathnormal',
  'hat', 'bar', 'tilde', 'vec', 'dot', 'ddot', 'overline', 'underbrace', 'overbrace', 'widehat', 'widetilde',
  'stackrel', 'mathop', 'limits', 'nolimits', 'displaystyle', 'textstyle', 'scriptstyle', 'ensuremath',
  'newcommand', 'renewcommand', 'providecommand', 'newenvironment', 'renewenvironment', 'newtheorem',
  'newcounter', 'setcounter', 'addtocounter', 'stepcounter', 'value', 'arabic', 'roman', 'Roman', 'alph',
  'Alph', 'the', 'setlength', 'addtolength', 'settowidth', 'textwidth', 'linewidth', 'textheight', 'parindent',
  'parskip', 'baselineskip', 'baselinestretch', 'makebox', 'framebox', 'mbox', 'fbox', 'parbox', 'raisebox',
  'rule', 'usepackage', 'documentclass', 'pagestyle', 'thispagestyle', 'pagenumbering', 'appendix', 'small',
  'footnotesize', 'scriptsize', 'tiny', 'large', 'Large', 'LARGE', 'huge', 'Huge', 'normalsize', 'bfseries',
  'itshape', 'ttfamily', 'sffamily', 'rmfamily', 'scshape', 'mdseries', 'upshape', 'normalfont', 'selectfont',
  'fontsize', 'verb', 'url_', 'LaTeX', 'TeX', 'dag', 'ddag', 'S', 'P', 'copyright', 'textregistered',
  'texttrademark', 'textdegree', 'textbullet', 'textendash', 'textemdash', 'textbackslash', 'textasciitilde',
  'textasciicircum', 'ldots', 'hyphenation', 'phantom', 'hphantom', 'vphantom', 'protect', 'makeatletter',
  'makeatother', 'newline', 'enspace', 'thinspace', 'negthinspace', 'marginpar', 'abstractname', 'contentsname',
  'refname', 'figurename', 'tablename', 'addcontentsline', 'addvspace', 'nonumber', 'boxed', 'not', 'mid',
  'parallel', 'perp', 'angle', 'triangle', 'ell', 'hbar', 'Re', 'Im', 'aleph', 'wp', 'prime', 'top', 'bot',
  'neg', 'wedge', 'vee', 'land', 'lor', 'lnot', 'oslash', 'odot', 'bigcup', 'bigcap', 'bigoplus', 'bigotimes',
  'coprod', 'll', 'gg', 'prec', 'succ', 'preceq', 'succeq', 'doteq', 'models', 'vdash', 'dashv', 'smile', 'frown',
  'colon', 'bmod', 'pmod', 'mod_', 'binom_', 'choose', 'over', 'atop', 'displaystyle', 'hfil', 'vfil', 'kern',
  'hskip', 'vskip', 'relax', 'def', 'let', 'edef', 'gdef', 'xdef', 'expandafter', 'noexpand', 'csname', 'endcsname',
].filter((n) => !n.endsWith('_'));

export const KERNEL_ENVIRONMENTS = [
  'document', 'itemize', 'enumerate', 'description', 'figure', 'figure*', 'table', 'table*', 'tabular', 'tabular*',
  'array', 'equation', 'eqnarray', 'eqnarray*', 'displaymath', 'math', 'center', 'flushleft', 'flushright',
  'quote', 'quotation', 'verse', 'verbatim', 'verbatim*', 'minipage', 'thebibliography', 'abstract', 'titlepage',
  'picture', 'list', 'trivlist', 'tabbing', 'filecontents', 'filecontents*', 'theindex', 'lrbox',
];

/** Classes installed with this server's TeX Live (checked by the diagnosis tests). */
export const INSTALLED_CLASSES = [
  'article', 'report', 'book', 'letter', 'beamer', 'memoir', 'scrartcl', 'scrreprt', 'scrbook', 'scrlttr2',
  'amsart', 'amsbook', 'amsproc', 'moderncv', 'exam', 'standalone', 'tufte-handout', 'tufte-book', 'minimal',
  'slides', 'proc', 'extarticle', 'extreport', 'extbook',
];

/** Well-known classes that are not installed here: never "corrected" to a similar name. */
export const UNINSTALLED_CLASSES = ['IEEEtran', 'llncs', 'elsarticle', 'revtex4', 'revtex4-1', 'revtex4-2', 'acmart', 'sigplanconf', 'aastex631', 'mnras', 'svjour3', 'jss', 'ctexart'];

/**
 * Longest name a suggestion is looked for: the longest package, class, command or font name
 * installed here is under 40 characters, and a request (or a log quoting it) controls the
 * name, so a longer one gets no suggestion instead of costing time on the event loop.
 */
export const MAX_SUGGESTED_NAME = 64;

/** Edit distance where swapping two neighbouring letters counts as one edit (a common typo). */
export function editDistance(a: string, b: string): number {
  return boundedEditDistance(a, b, Math.max(a.length, b.length));
}

// Three rows, reused: a distance is computed without allocating (these run on the event loop).
let rows: [Int32Array, Int32Array, Int32Array] = [new Int32Array(0), new Int32Array(0), new Int32Array(0)];

/**
 * editDistance when it is at most `max`, else `max + 1`; in time O(length × max): only the
 * band of cells within `max` of the diagonal is filled, and it stops at the first row whose
 * every cell is over `max` (distances along a row never shrink further down).
 */
export function boundedEditDistance(a: string, b: string, max: number): number {
  const n = a.length;
  const m = b.length;
  if (Math.abs(n - m) > max) return max + 1;
  if (rows[0].length < m + 1) rows = [new Int32Array(m + 1), new Int32Array(m + 1), new Int32Array(m + 1)];
  let [before, up, row] = rows;
  const over = max + 1;
  for (let j = 0; j <= m; j++) up[j] = j <= max ? j : over;
  for (let i = 1; i <= n; i++) {
    const from = Math.max(1, i - max);
    const to = Math.min(m, i + max);
    row[0] = i <= max ? i : over;
    if (from > 1) row[from - 1] = over;
    let best = row[0];
    for (let j = from; j <= to; j++) {
      const cost = a.charCodeAt(i - 1) === b.charCodeAt(j - 1) ? 0 : 1;
      let d = Math.min(up[j]! + 1, row[j - 1]! + 1, up[j - 1]! + cost);
      if (i > 1 && j > 1 && a.charCodeAt(i - 1) === b.charCodeAt(j - 2) && a.charCodeAt(i - 2) === b.charCodeAt(j - 1)) d = Math.min(d, before[j - 2]! + 1);
      row[j] = Math.min(d, over);
      if (row[j]! < best) best = row[j]!;
    }
    if (to < m) row[to + 1] = over;
    if (best > max) return over;
    [before, up, row] = [up, row, before];
  }
  return Math.min(up[m]!, over);
}

/**
 * The one candidate one edit (a letter added, dropped, changed, or two swapped) away from
 * `name`, or undefined when there is none or more than one. Names under 4 characters are never
 * matched: too many short names are one edit apart.
 */
export function closest(name: string, candidates: Iterable<string>, options: { caseInsensitive?: boolean; max?: number } = {}): string | undefined {
  if (name.length < 4 || name.length > MAX_SUGGESTED_NAME) return undefined;
  const max = options.max ?? 1;
  const norm = (s: string) => (options.caseInsensitive ? s.toLowerCase().replace(/\s+/g, '') : s);
  const wanted = norm(name);
  let best: string[] = [];
  let bestDistance = Infinity;
  for (const candidate of new Set(candidates)) {
    if (candidate === name) continue;
    const d = boundedEditDistance(wanted, norm(candidate), max);
    if (d > max) continue;
    if (d < bestDistance) {
      best = [candidate];
      bestDistance = d;
    } else if (d === bestDistance) best.push(candidate);
  }
  return best.length === 1 ? best[0] : undefined;
}
