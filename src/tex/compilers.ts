// The TeX engines Quire runs. The plan table (quota/plans.ts) says which plan may use which;
// this module only names them, so the TeX layer needs nothing from the domain above it.

export type Compiler = 'pdflatex' | 'xelatex' | 'lualatex';

export const COMPILERS: readonly Compiler[] = ['pdflatex', 'xelatex', 'lualatex'];

export function isCompiler(value: unknown): value is Compiler {
  return typeof value === 'string' && (COMPILERS as readonly string[]).includes(value);
}
