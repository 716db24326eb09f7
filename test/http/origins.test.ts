// The /mcp Origin rule (src/http/origins.ts), shared by the CORS hook and the /mcp route: no
// Origin passes, a browser Origin must be on the list (compared as a normalised origin), and
// "*" allows every origin. The black-box answers are in test/security/edge.test.ts.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { ServiceError } from '../../src/errors.js';
import { allowsAnyOrigin, checkMcpOrigin, mcpOriginAllowed } from '../../src/http/origins.js';

const own = { mcpAllowedOrigins: ['https://quire.example:8443'] };
const any = { mcpAllowedOrigins: ['*'] };

function refusal(run: () => void): ServiceError {
  try {
    run();
  } catch (err) {
    assert.ok(err instanceof ServiceError);
    return err;
  }
  assert.fail('the origin was allowed');
}

describe('the /mcp Origin rule', () => {
  test('a listed origin is allowed however it is spelt; anything else is not', () => {
    assert.equal(mcpOriginAllowed(own, 'https://quire.example:8443'), true);
    assert.equal(mcpOriginAllowed(own, 'HTTPS://QUIRE.example:8443/'), true);
    for (const origin of ['https://quire.example', 'http://quire.example:8443', 'https://quire.example:8443.evil.example', 'null', 'not a url', '']) {
      assert.equal(mcpOriginAllowed(own, origin), false, origin);
    }
  });

  test('"*" allows every origin, "null" included', () => {
    assert.equal(allowsAnyOrigin(any), true);
    assert.equal(allowsAnyOrigin(own), false);
    assert.equal(mcpOriginAllowed(any, 'null'), true);
    assert.equal(mcpOriginAllowed(any, 'https://evil.example'), true);
  });

  test('no Origin header passes; a refused one is 403 origin_not_allowed naming it', () => {
    checkMcpOrigin(own, undefined);
    checkMcpOrigin(own, 'https://quire.example:8443');
    const err = refusal(() => checkMcpOrigin(own, 'https://evil.example'));
    assert.equal(err.status, 403);
    assert.deepEqual(err.body(), {
      error: 'origin_not_allowed',
      message: 'Browser pages from "https://evil.example" may not call /mcp. The operator can allow an origin with QUIRE_MCP_ALLOWED_ORIGINS.',
      origin: 'https://evil.example',
    });
  });

  test('a long refused Origin is cut to 200 characters in the answer', () => {
    const long = `https://${'a'.repeat(300)}.example`;
    const err = refusal(() => checkMcpOrigin(own, long));
    assert.equal(err.body().origin, `${long.slice(0, 200)}…`);
    assert.ok(err.message.includes(JSON.stringify(`${long.slice(0, 200)}…`)));
  });
});
