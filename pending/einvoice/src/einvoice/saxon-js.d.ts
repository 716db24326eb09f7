// The parts of saxon-js 2.7 (no bundled types) the e-invoice rules use (rules.ts).
declare module 'saxon-js' {
  interface TransformOptions {
    stylesheetInternal: unknown;
    sourceNode: unknown;
    destination: 'document' | 'raw' | 'serialized';
  }
  const SaxonJS: {
    getResource(options: { text: string; type: 'xml' }): Promise<unknown>;
    transform(options: TransformOptions, mode: 'sync'): unknown;
    XPath: { evaluate(xpath: string, context: unknown, options: { namespaceContext: Record<string, string>; resultForm: 'array' }): unknown };
  };
  export default SaxonJS;
}
