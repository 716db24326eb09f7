// XML schema validation of a CII invoice against the vendored UN/CEFACT D16B schema with libxml2
// (xmllint-wasm): saxon-js does not validate schemas. xmllint-wasm's own API starts a worker and
// compiles its WebAssembly for every call (~200 ms); here the module is compiled once and a fresh
// instance (a few ms) runs each check, in the rules worker's thread. The instance sees only an
// in-memory file system holding the schema and the invoice, and runs with --nonet.
import { readFileSync, readdirSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { projectRoot } from '../project-root.js';
import type { EinvoiceFinding } from './report.js';

interface XmllintRun {
  inputFiles: { fileName: string; contents: Uint8Array | string }[];
  arguments: string[];
  print(text: string): void;
  printErr(text: string): void;
  onExit(code: number): void;
  onAbort(reason: unknown): void;
  wasmMemory: WebAssembly.Memory;
  instantiateWasm(imports: WebAssembly.Imports, done: (instance: WebAssembly.Instance, module: WebAssembly.Module) => void): object;
}

const MAIN_SCHEMA = 'xsd/CrossIndustryInvoice_100pD16B.xsd';
/** 16 MiB to start, 128 MiB at most (a 2 MB invoice parses in far less). */
const MEMORY = { initial: 256, maximum: 2048 };

let engine: { run: (options: XmllintRun) => Promise<unknown>; wasm: WebAssembly.Module; schema: { fileName: string; contents: Uint8Array }[] } | null = null;

function load(): NonNullable<typeof engine> {
  if (engine) return engine;
  const require = createRequire(import.meta.url);
  const dir = join(require.resolve('xmllint-wasm/package.json'), '..');
  // The module's own worker glue registers a listener on the thread's parent port at load; it
  // answers only messages tagged 'xmllint-wasm', which this thread never receives.
  const run = require(join(dir, 'xmllint-node.js')) as (options: XmllintRun) => Promise<unknown>;
  const wasm = new WebAssembly.Module(readFileSync(join(dir, 'xmllint.wasm')));
  const schemaDir = join(projectRoot(), 'vendor', 'einvoice', 'cii-d16b');
  const schema = readdirSync(schemaDir)
    .filter((name) => name.endsWith('.xsd'))
    .map((name) => ({ fileName: `xsd/${name}`, contents: new Uint8Array(readFileSync(join(schemaDir, name))) }));
  engine = { run, wasm, schema };
  return engine;
}

export interface SchemaResult {
  /** libxml2 could not parse the document at all: its first message, with the line. */
  notWellFormed?: { message: string; line?: number };
  errors: EinvoiceFinding[];
}

/** Checks the CII `text` against the D16B schema. */
export function checkCiiSchema(text: string): Promise<SchemaResult> {
  const { run, wasm, schema } = load();
  return new Promise((resolve) => {
    let stderr = '';
    void run({
      inputFiles: [...schema, { fileName: 'invoice.xml', contents: text }],
      arguments: ['--nonet', '--noout', '--schema', MAIN_SCHEMA, 'invoice.xml'],
      print: () => {},
      printErr: (line) => {
        if (stderr.length < 200_000) stderr += line + '\n';
      },
      onExit: () => resolve(readErrors(stderr)),
      onAbort: (reason) => resolve({ errors: [{ rule: 'XSD', message: `The schema check stopped: ${String(reason)}`, location: '' }] }),
      wasmMemory: new WebAssembly.Memory(MEMORY),
      instantiateWasm(imports, done) {
        void WebAssembly.instantiate(wasm, imports).then((instance) => done(instance, wasm));
        return {};
      },
    });
  });
}

/** xmllint's lines `invoice.xml:18: Schemas validity error : …` and `invoice.xml:1: parser error : …`. */
function readErrors(stderr: string): SchemaResult {
  const errors: EinvoiceFinding[] = [];
  for (const line of stderr.split('\n')) {
    const m = /^invoice\.xml:(\d+): (?:element [^:]*: )?(parser error|Schemas validity error|Schemas parser error|namespace error)\s*:\s*(.*)$/.exec(line);
    if (!m) continue;
    const [, lineNo, kind, message] = m;
    if (kind === 'parser error' || kind === 'namespace error') return { notWellFormed: { message: message!, line: Number(lineNo) }, errors: [] };
    errors.push({ rule: 'XSD', message: message!.replace(/\{urn:un:unece:uncefact:data:standard:([A-Za-z]+):100\}/g, (_, n: string) => `${SHORT[n] ?? n}:`), location: `line ${lineNo}` });
    if (errors.length >= 100) break;
  }
  return { errors };
}

const SHORT: Record<string, string> = {
  CrossIndustryInvoice: 'rsm',
  ReusableAggregateBusinessInformationEntity: 'ram',
  UnqualifiedDataType: 'udt',
  QualifiedDataType: 'qdt',
};
