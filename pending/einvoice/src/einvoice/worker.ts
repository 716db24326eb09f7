// The body of the e-invoice rules worker thread (pool.ts): loads the rule sets once, then checks
// one invoice at a time (check.ts) off the server's event loop, where saxon-js's synchronous
// transforms and libxml2 would otherwise hold every other request (issue 37). Uploaded PDFs are
// opened here too (pdf-xml.ts), for the same reason.
import { parentPort } from 'node:worker_threads';
import { checkInvoice, type CheckOutcome } from './check.js';
import { xmlFromPdf } from './pdf-xml.js';
import type { RulesReply, RulesRequest } from './pool.js';
import { loadAll } from './rules.js';

const port = parentPort!;
loadAll();
port.postMessage({ ready: true } satisfies RulesReply);
port.on('message', (request: RulesRequest) => {
  run(request).then(
    (outcome) => port.postMessage({ id: request.id, outcome } satisfies RulesReply),
    (err: unknown) => port.postMessage({ id: request.id, internal: err instanceof Error ? (err.stack ?? err.message) : String(err) } satisfies RulesReply),
  );
});

async function run(request: RulesRequest): Promise<CheckOutcome> {
  if ('pdf' in request) {
    const found = await xmlFromPdf(request.pdf);
    if (!found.ok) return found;
    return checkInvoice(found.xml, request.profile);
  }
  return checkInvoice(request.xml, request.profile);
}
