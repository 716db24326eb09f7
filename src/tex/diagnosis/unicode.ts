// What to write instead of a Unicode character pdflatex cannot typeset, and which installed
// fonts have a character xelatex/lualatex could not find. Both are facts, never guesses:
// the table is ours, the fonts come from fontconfig on this machine.
import { imageToolSync } from '../image/tools.js';
import { defaultImageRoot } from '../image/default.js';

/** Math symbols: write the command inside math, or wrap it as $...$ in text. */
const MATH: Record<string, string> = {
  '≤': '\\leq', '≥': '\\geq', '≠': '\\neq', '≈': '\\approx', '≡': '\\equiv', '∞': '\\infty',
  '∑': '\\sum', '∏': '\\prod', '∫': '\\int', '√': '\\sqrt{}', '∂': '\\partial', '∇': '\\nabla',
  '∈': '\\in', '∉': '\\notin', '∀': '\\forall', '∃': '\\exists', '∅': '\\emptyset', '∧': '\\wedge',
  '∨': '\\vee', '¬': '\\neg', '⊂': '\\subset', '⊆': '\\subseteq', '⊃': '\\supset', '⊇': '\\supseteq',
  '∪': '\\cup', '∩': '\\cap', '∘': '\\circ', '⊕': '\\oplus', '⊗': '\\otimes', '↦': '\\mapsto',
  '→': '\\rightarrow', '←': '\\leftarrow', '↔': '\\leftrightarrow', '⇒': '\\Rightarrow',
  '⇐': '\\Leftarrow', '⇔': '\\Leftrightarrow', '↑': '\\uparrow', '↓': '\\downarrow',
  '∝': '\\propto', '∼': '\\sim', '≪': '\\ll', '≫': '\\gg', '⊥': '\\perp', '∥': '\\parallel',
  'ℓ': '\\ell', 'ℏ': '\\hbar', '−': '-', '′': "'", '∆': '\\Delta', '⟨': '\\langle', '⟩': '\\rangle',
  '⋅': '\\cdot', '∗': '\\ast', '⊢': '\\vdash', '⊨': '\\models', '≅': '\\cong', '≃': '\\simeq',
  '∣': '\\mid', '⌊': '\\lfloor', '⌋': '\\rfloor', '⌈': '\\lceil', '⌉': '\\rceil', '∓': '\\mp',
  'ℵ': '\\aleph', '℘': '\\wp', 'ℑ': '\\Im', 'ℜ': '\\Re', '⊤': '\\top', '∠': '\\angle', '★': '\\star',
  '○': '\\bigcirc', '●': '\\bullet', '♠': '\\spadesuit', '♥': '\\heartsuit', '♦': '\\diamondsuit', '♣': '\\clubsuit',
  '₀': '_0', '₁': '_1', '₂': '_2', '₃': '_3', '₄': '_4', '⁴': '^4', 'ⁿ': '^n',
};

/** Symbols that need a package (math commands unless noted). */
const WITH_PACKAGE: Record<string, { command: string; package: string }> = {
  '✓': { command: '\\checkmark', package: 'amssymb' },
  '✔': { command: '\\checkmark', package: 'amssymb' },
  'ℝ': { command: '\\mathbb{R}', package: 'amssymb' },
  'ℕ': { command: '\\mathbb{N}', package: 'amssymb' },
  'ℤ': { command: '\\mathbb{Z}', package: 'amssymb' },
  'ℚ': { command: '\\mathbb{Q}', package: 'amssymb' },
  'ℂ': { command: '\\mathbb{C}', package: 'amssymb' },
  '□': { command: '\\square', package: 'amssymb' },
  '■': { command: '\\blacksquare', package: 'amssymb' },
  '∴': { command: '\\therefore', package: 'amssymb' },
  '∵': { command: '\\because', package: 'amssymb' },
  '⩽': { command: '\\leqslant', package: 'amssymb' },
  '⩾': { command: '\\geqslant', package: 'amssymb' },
  '✗': { command: '\\ding{55}', package: 'pifont' },
  '✘': { command: '\\ding{56}', package: 'pifont' },
};

export interface UnicodeAdvice {
  /** Text for the fix, naming the replacement and where it goes. */
  replacement?: string;
  /** A package whose \usepackage line alone makes the raw character work. */
  package?: string;
  /** Full \usepackage line for `package` (with options when needed). */
  usepackage?: string;
}

export function codepointOf(char: string): string {
  return `U+${(char.codePointAt(0) ?? 0).toString(16).toUpperCase().padStart(4, '0')}`;
}

/** How to typeset `char` under pdflatex, when we know. */
export function pdflatexAdvice(char: string): UnicodeAdvice | undefined {
  const cp = char.codePointAt(0) ?? 0;
  if ((cp >= 0x0370 && cp <= 0x03ff) || (cp >= 0x1f00 && cp <= 0x1fff)) {
    // alphabeta (greek-fontenc) maps Unicode Greek in text and math.
    return { package: 'alphabeta', usepackage: '\\usepackage{alphabeta}' };
  }
  if ('«»„‚‹›'.includes(char)) {
    return { package: 'fontenc', usepackage: '\\usepackage[T1]{fontenc}' };
  }
  const math = MATH[char];
  if (math) return { replacement: `\\ensuremath{${math}}` };
  const withPackage = WITH_PACKAGE[char];
  if (withPackage) return { replacement: `\\ensuremath{${withPackage.command}}`, package: withPackage.package, usepackage: `\\usepackage{${withPackage.package}}` };
  return undefined;
}

const PREFERRED_FONTS = [
  'DejaVu Serif', 'DejaVu Sans', 'Noto Serif', 'Noto Sans', 'Liberation Serif', 'Liberation Sans',
  'Noto Sans Math', 'Noto Sans Symbols', 'Noto Sans Symbols2', 'DejaVu Sans Mono',
];
const fontCache = new Map<number, string[]>();

/** Font families installed on this machine that have the character (fontconfig), best first. */
export function fontsWithChar(codepoint: number): string[] {
  const cached = fontCache.get(codepoint);
  if (cached) return cached;
  let families: string[] = [];
  try {
    const out = imageToolSync(['fc-list', `:charset=${codepoint.toString(16)}`, 'family'], defaultImageRoot(), 5000);
    families = [...new Set(out.split('\n').map((l) => l.split(',')[0]?.trim() ?? '').filter(Boolean))];
  } catch {
    families = [];
  }
  const rank = (f: string) => {
    const i = PREFERRED_FONTS.indexOf(f);
    return i === -1 ? PREFERRED_FONTS.length : i;
  };
  families.sort((a, b) => rank(a) - rank(b) || a.localeCompare(b));
  fontCache.set(codepoint, families);
  return families;
}

let installed: string[] | undefined;

/** Every font family fontconfig knows on this machine. */
export function installedFonts(): string[] {
  if (installed) return installed;
  try {
    const out = imageToolSync(['fc-list', ':', 'family'], defaultImageRoot(), 5000);
    installed = [...new Set(out.split('\n').flatMap((l) => l.split(',').map((f) => f.trim())).filter(Boolean))].sort();
  } catch {
    installed = [];
  }
  return installed;
}
