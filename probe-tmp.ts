import { testServices } from './test/helpers.ts';
const s = await testServices({ env: { QUIRE_PAUSED_PREAMBLES: '0' } });
const r: any = await s.texQueue.run({ compiler: 'pdflatex', source: `\\documentclass{article}\n\\begin{document}\nHello\n\\end{document}\n`, timeoutMs: 60000, maxFileBytes: 50e6, output: { pdfStandard: 'a-1b', metadata: { title: 'B' } } } as any);
console.log(r.passes); console.log(r.log.split('\n').filter((l: string) => /rerun|No file|Rerun|changed|warning/i.test(l)).join('\n'));
await s.cleanup();
