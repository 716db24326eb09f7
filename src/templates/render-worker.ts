// The body of a render worker thread: receives one render at a time from the pool, runs the
// Liquid engine here (never on the server's event loop) and posts back the document or the
// catalogue error. A render that hangs or grows without bound is ended from outside by the pool.
import { parentPort } from 'node:worker_threads';
import { isServiceError } from '../errors.js';
import { renderInThread } from './liquid.js';
import type { RenderRequest, RenderReply } from './render-pool.js';

const port = parentPort!;
port.postMessage({ ready: true } satisfies RenderReply);
port.on('message', (request: RenderRequest) => {
  renderInThread(request.source, request.data, { assetNames: request.assetNames }).then(
    (result) => port.postMessage({ id: request.id, ok: true, result } satisfies RenderReply),
    (err: unknown) => {
      const reply: RenderReply = isServiceError(err)
        ? { id: request.id, ok: false, error: { code: err.code, message: err.message, details: err.details } }
        : { id: request.id, ok: false, internal: err instanceof Error ? (err.stack ?? err.message) : String(err) };
      port.postMessage(reply);
    },
  );
});
