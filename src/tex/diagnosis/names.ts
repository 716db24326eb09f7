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

/** Edit distance where swapping two neighbouring letters counts as one edit (a common typo). */
/** Well-known classes that are not installed here: never "corrected" to a similar name. */
export const UNINSTALLED_CLASSES = ['IEEEtran', 'llncs', 'elsarticle', 'revtex4', 'revtex4-1', 'revtex4-2', 'acmart', 'sigplanconf', 'aastex631', 'mnras', 'svjour3', 'jss', 'ctexart'];

export function editDistance(a: string, b: string): number {
  const d: number[][] = Array.from({ length: a.length + 1 }, (_, i) => Array.from({ length: b.length + 1 }, (_, j) => (i === 0 ? j : j === 0 ? i : 0)));
  for (let i = 1; i <= a.length; i++) {
    for (let j = 1; j <= b.length; j++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1;
      const row = d[i] as number[];
      const up = d[i - 1] as number[];
      row[j] = Math.min((up[j] ?? 0) + 1, (row[j - 1] ?? 0) + 1, (up[j - 1] ?? 0) + cost);
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1]) {
        row[j] = Math.min(row[j] ?? 0, ((d[i - 2] as number[])[j - 2] ?? 0) + 1);
      }
    }
  }
  return (d[a.length] as number[])[b.length] ?? 0;
}

/**
 * The one candidate one edit (a letter added, dropped, changed, or two swapped) away from
 * `name`, or undefined when there is none or more than one. Names under 4 characters are never
 * matched: too many short names are one edit apart.
 */
export function closest(name: string, candidates: Iterable<string>, options: { caseInsensitive?: boolean; max?: number } = {}): string | undefined {
  if (name.length < 4) return undefined;
  const max = options.max ?? 1;
  const norm = (s: string) => (options.caseInsensitive ? s.toLowerCase().replace(/\s+/g, '') : s);
  let best: string[] = [];
  let bestDistance = Infinity;
  for (const candidate of new Set(candidates)) {
    if (candidate === name) continue;
    const d = editDistance(norm(name), norm(candidate));
    if (d > max) continue;
    if (d < bestDistance) {
      best = [candidate];
      bestDistance = d;
    } else if (d === bestDistance) best.push(candidate);
  }
  return best.length === 1 ? best[0] : undefined;
}
