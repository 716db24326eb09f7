// Renders a PDF into canvases with pdf.js, so the preview looks the same in every browser.
// Loaded lazily by the studio; the parser runs in pdf.js's worker (public/build/pdf.worker-*).
import { GlobalWorkerOptions, getDocument, type PDFDocumentProxy } from 'pdfjs-dist';

/** More pages than this are left to the "Open PDF" link. */
const MAX_RENDERED_PAGES = 50;

let current: PDFDocumentProxy | null = null;

/** `password`: the user password of a PDF the studio asked to be encrypted ('' for none). */
export async function renderPdf(container: HTMLElement, url: string, workerSrc: string, password = ''): Promise<number> {
  GlobalWorkerOptions.workerSrc = workerSrc;
  // isEvalSupported: false keeps pdf.js inside the page's CSP (no `new Function`).
  const task = getDocument({ url, isEvalSupported: false, enableXfa: false, ...(password ? { password } : {}) });
  const pdf = await task.promise;
  const previous = current;
  current = pdf;
  await drawPages(container, pdf);
  void previous?.destroy();
  return pdf.numPages;
}

/** Redraws the current document at the container's width (after a resize). */
export async function redraw(container: HTMLElement): Promise<void> {
  if (current) await drawPages(container, current);
}

async function drawPages(container: HTMLElement, pdf: PDFDocumentProxy): Promise<void> {
  const width = Math.max(200, container.clientWidth - 32);
  const ratio = window.devicePixelRatio || 1;
  const pages: HTMLElement[] = [];
  const count = Math.min(pdf.numPages, MAX_RENDERED_PAGES);
  for (let n = 1; n <= count; n++) {
    const page = await pdf.getPage(n);
    const base = page.getViewport({ scale: 1 });
    const scale = width / base.width;
    const viewport = page.getViewport({ scale: scale * ratio });
    const canvas = document.createElement('canvas');
    canvas.width = Math.floor(viewport.width);
    canvas.height = Math.floor(viewport.height);
    canvas.style.width = `${Math.floor(base.width * scale)}px`;
    canvas.style.aspectRatio = `${base.width} / ${base.height}`;
    canvas.setAttribute('role', 'img');
    canvas.setAttribute('aria-label', `Page ${n} of ${pdf.numPages}`);
    canvas.className = 'pdf-page';
    const context = canvas.getContext('2d');
    if (!context) throw new Error('This browser cannot draw on a canvas.');
    await page.render({ canvasContext: context, viewport }).promise;
    pages.push(canvas);
  }
  if (pdf.numPages > count) {
    const more = document.createElement('p');
    more.className = 'placeholder';
    more.textContent = `Showing the first ${count} of ${pdf.numPages} pages. Open the PDF to see them all.`;
    pages.push(more);
  }
  container.replaceChildren(...pages);
}
