// Image formats a job can \includegraphics: the engines' own (png, jpg, jpeg, pdf) and svg,
// eps and ps, which reach TeX as converted PDFs. The asset rules (quota/plans.ts) accept exactly these,
// and the diagnosis uses them to tell a missing image from a missing TeX file.

export const GRAPHICS_EXTENSIONS = ['png', 'jpg', 'jpeg', 'pdf', 'svg', 'eps', 'ps'] as const;
