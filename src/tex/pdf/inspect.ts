// A PDF's page count and active content read by qpdf inside the job's sandbox, when the
// in-process reader (pdfread.ts) gives up on TeX's PDF or for an output step's own PDFs.
import { activeContent, SCAN_PATTERN } from './pdfcheck.js';
import type { Exec } from '../sandbox/session.js';
import { MAIN, WorkspaceViolation, type Workspace } from '../sandbox/workspace.js';

/** qpdf's JSON view of the PDF (objects without stream data), written and scanned in the sandbox. */
const INSPECT_CAP = 64 * 1024 * 1024;
const INSPECT_SCAN = '.quire-pdf-scan';

/**
 * A PDF's page count (main.pdf, or `file`), then its active content (see pdfcheck.ts), in one command: qpdf's
 * JSON and the grep over it stay in the sandbox, under its limits; the host reads back the
 * count and the matches. A PDF whose JSON passes INSPECT_CAP, or that qpdf cannot turn into
 * JSON, is not delivered either.
 */
export async function inspectInSandbox(
  exec: (argv: string[], fileBytes?: number) => Promise<Exec>,
  workspace: Workspace,
  file = `${MAIN}.pdf`,
): Promise<{ pages: number; active: string[] } | { unmeasurable: string }> {
  // One qpdf (each start costs about 9 ms in the sandbox): its JSON holds the page list, one
  // `"pageposfrom1": N` line per page (keys qpdf writes; a PDF's own keys keep their "/"), and
  // the objects the scan greps. qpdf exits 3 when it read the PDF with warnings: the count is
  // good. Exit 6: no count; 4: the JSON passed the file size cap; 5: the scan itself failed
  // (fail closed).
  const script =
    'rm -rf "$0" "$0.json" || exit 5; qpdf --json=2 --json-key=qpdf --json-key=pages "$1" >"$0.json" 2>"$0.err"; rc=$?; ' +
    'cat "$0.err"; rm -f "$0.err"; [ "$rc" -eq 153 ] && { rm -f "$0.json"; exit 4; }; ' +
    '[ "$rc" -ne 0 ] && [ "$rc" -ne 3 ] && { rm -f "$0.json"; exit 6; }; ' +
    'grep -c -E \'^ *"pageposfrom1": [0-9]+,?$\' "$0.json"; ' +
    'grep -E -i -o "$2" "$0.json" >"$0"; [ "$?" -gt 1 ] && rc=5; rm -f "$0.json"; exit "$rc"';
  const scanned = await exec(['sh', '-c', script, INSPECT_SCAN, file, SCAN_PATTERN], INSPECT_CAP);
  // qpdf's warnings come first in the output: the count is the last line that is only a number.
  const pages = Number(scanned.output.split('\n').filter((line) => /^\d+$/.test(line.trim())).pop());
  if (scanned.code === 6 || !Number.isInteger(pages) || pages < 1) return { unmeasurable: scanned.output.slice(0, 500) };
  if (scanned.code !== 0 && scanned.code !== 3) {
    throw new WorkspaceViolation(
      scanned.code === 4 ? 'the PDF has too many objects to be inspected for active content' : 'the PDF could not be inspected for active content',
    );
  }
  const scan = await workspace.read(INSPECT_SCAN, INSPECT_CAP);
  if (scan === 'over') throw new WorkspaceViolation('the PDF has too many links and actions to be inspected for active content');
  if (scan === null) throw new WorkspaceViolation('the PDF could not be inspected for active content');
  return { pages, active: activeContent(scan?.toString('utf8') ?? '') };
}
