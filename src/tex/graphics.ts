// Image formats a job can \includegraphics: the engines' own (png, jpg, jpeg, pdf) and svg,
// which reaches TeX as a converted PDF. The asset rules (quota/plans.ts) accept exactly these,
// and the diagnosis uses them to tell a missing image from a missing TeX file.

export const GRAPHICS_EXTENSIONS = ['png', 'jpg', 'jpeg', 'pdf', 'svg'] as const;
