// The render pipeline shared by saved and gallery templates, with a stand-in compiler and a
// ManualClock: the deadline and render_time_ms come from the injected clock, data problems stop
// the render before anyone is charged, and a compile that ends past the deadline (per the clock)
// is the render's 504 at once, with no real waiting.
import assert from 'node:assert/strict';
import { after, describe, it } from 'node:test';
import type { Caller } from '../../src/accounts/caller.js';
import { ManualClock } from '../../src/clock.js';
import type { CompileSuccess } from '../../src/compile/types.js';
import { ServiceError } from '../../src/errors.js';
import { renderPool } from '../../src/templates/render-pool.js';
import { RenderPipeline, type RenderCompiler, type TemplateKind } from '../../src/templates/pipeline.js';
import { validateData } from '../../src/templates/validate.js';

const caller = { kind: 'anonymous', ip: '192.0.2.1' } as unknown as Caller;
const schema = { type: 'object', properties: { name: { type: 'string' } }, required: ['name'] };
const SOURCE = '\\documentclass{article}\\begin{document}Hello {{ name }}\\end{document}';
const kind: TemplateKind = {
  via: 'render',
  validate: validateData,
  invalid: (problems) => new ServiceError('schema_validation_failed', 'bad data', { ...problems }),
};

interface Call {
  latex: unknown;
  compiler: unknown;
  deadline: number;
}

function compiler(clock: ManualClock, behave: (call: Call) => CompileSuccess | ServiceError): { compiler: RenderCompiler; calls: Call[] } {
  const calls: Call[] = [];
  return {
    calls,
    compiler: {
      compile: async (_caller, input, context) => {
        const call = { latex: input.latex, compiler: input.compiler, deadline: context.deadline };
        calls.push(call);
        const outcome = behave(call);
        if (outcome instanceof ServiceError) throw outcome;
        return outcome;
      },
      // As a server without TeX images (QUIRE_SANDBOX=off): no year asked for, the host's TeX Live.
      texliveYear: () => 'host',
    },
  };
}

const success = { job_id: 'j', pdf_url: 'https://example.test/p.pdf' } as unknown as CompileSuccess;

after(() => renderPool().close());

describe('RenderPipeline', () => {
  it('the deadline and render_time_ms are read from the injected clock', async () => {
    const clock = new ManualClock(new Date('2026-03-01T10:00:00Z'));
    const start = clock.ms();
    const { compiler: c, calls } = compiler(clock, () => (clock.advance(1234), success));
    const pipeline = new RenderPipeline(clock, c, kind, 60_000);
    let charged = 0;
    const result = await pipeline.run(caller, async () => ({
      source: SOURCE,
      schema,
      data: { name: 'Ada' },
      compiler: null,
      charge: async () => void charged++,
      template: { id: 7 },
    }));
    assert.equal(calls.length, 1);
    assert.equal(calls[0]!.deadline, start + 60_000);
    assert.match(String(calls[0]!.latex), /Hello Ada/);
    assert.equal(calls[0]!.compiler, 'pdflatex');
    assert.equal(result.render_time_ms, 1234);
    assert.deepEqual(result.template, { id: 7 });
    assert.equal(charged, 1);
  });

  it('a compile that ends past the deadline per the clock is render_total_timeout at once', async () => {
    const clock = new ManualClock(new Date('2026-03-01T10:00:00Z'));
    // The compile "takes" 61 s of the ManualClock and reports the deadline it was cut at.
    const { compiler: c } = compiler(clock, () => (clock.advance(61_000), new ServiceError('compilation_timeout', 'late', {})));
    const pipeline = new RenderPipeline(clock, c, kind, 60_000);
    const started = Date.now();
    await assert.rejects(
      pipeline.run(caller, async () => ({ source: SOURCE, schema, data: { name: 'Ada' }, compiler: 'xelatex', template: {} })),
      (err: unknown) => err instanceof ServiceError && err.code === 'render_total_timeout' && err.status === 504 && err.details.limit_seconds === 60,
    );
    assert.ok(Date.now() - started < 5000, 'no real wait for the 60 s wall clock');
    // The same compile failure inside the deadline stays the plan's compilation_timeout.
    const early = compiler(clock, () => new ServiceError('compilation_timeout', 'plan timeout', {}));
    await assert.rejects(
      new RenderPipeline(clock, early.compiler, kind, 60_000).run(caller, async () => ({ source: SOURCE, schema, data: { name: 'Ada' }, compiler: null, template: {} })),
      (err: unknown) => err instanceof ServiceError && err.code === 'compilation_timeout',
    );
  });

  it('invalid data is refused before the caller is charged or anything compiles', async () => {
    const clock = new ManualClock();
    const { compiler: c, calls } = compiler(clock, () => success);
    let charged = 0;
    await assert.rejects(
      new RenderPipeline(clock, c, kind, 60_000).run(caller, async () => ({
        source: SOURCE,
        schema,
        data: { name: 5 },
        compiler: null,
        charge: async () => void charged++,
        template: {},
      })),
      (err: unknown) =>
        err instanceof ServiceError &&
        err.code === 'schema_validation_failed' &&
        // Like every 422 of a render, it says which TeX Live the render would have run with.
        JSON.stringify(err.details) === JSON.stringify({ missing_fields: [], type_errors: [{ field: 'name', expected: 'string', got: 'number' }], texlive: 'host' }),
    );
    assert.equal(charged, 0);
    assert.equal(calls.length, 0);
  });
});
