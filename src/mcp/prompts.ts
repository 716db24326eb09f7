// MCP prompts: ready-made instructions for the jobs agents come here for.
import { RPC, RpcError } from './jsonrpc.js';

interface PromptArgument {
  name: string;
  description: string;
  required: boolean;
}

interface Prompt {
  name: string;
  title: string;
  description: string;
  arguments: PromptArgument[];
  text(args: Record<string, string>): string;
}

const PROMPTS: Prompt[] = [
  {
    name: 'fix_latex_error',
    title: 'Fix a LaTeX compile error',
    description: 'Correct a LaTeX document that failed to compile, using the diagnosis Quire returned, and compile it again.',
    arguments: [
      { name: 'latex', description: 'The complete LaTeX source that failed.', required: true },
      {
        name: 'error',
        description: 'The error from the failed compile: the structuredContent JSON (with diagnosis) or the log.',
        required: false,
      },
    ],
    text: ({ latex, error }) =>
      [
        'This LaTeX document failed to compile with Quire.',
        error
          ? `The compile error was:\n\n${error}\n\nIf it has a \`diagnosis\`, apply its \`suggested_fix\` (and \`suggested_package\`) at the line it names; otherwise read the first error in the log.`
          : 'Call the `compile` tool with it to get the error and its diagnosis.',
        'Fix the cause with the smallest change that keeps the document\'s content and look, then call `compile` with the whole corrected source.',
        'Repeat until it compiles (at most three attempts), then give the user the pdf_url and any warning.',
        `Source:\n\n\`\`\`latex\n${latex}\n\`\`\``,
      ].join('\n\n'),
  },
  {
    name: 'write_latex_document',
    title: 'Write a LaTeX document',
    description: 'Write a complete LaTeX document from a description and compile it to a PDF.',
    arguments: [
      { name: 'description', description: 'What the document should contain and look like.', required: true },
      { name: 'compiler', description: 'pdflatex (default), xelatex or lualatex.', required: false },
    ],
    text: ({ description, compiler }) =>
      [
        `Write a complete LaTeX document for ${compiler ?? 'pdflatex'}: ${description}`,
        'Use only standard TeX Live packages, no shell escape (no minted), and keep it within the plan limits (read the quire://limits resource).',
        'Call the `compile` tool with the whole source. If the result is an error, apply the diagnosis and compile again.',
        'Finally give the user the pdf_url and relay any warning.',
      ].join('\n\n'),
  },
  {
    name: 'fill_public_template',
    title: 'Fill a public template',
    description: 'Turn facts (an order, a CV, a report) into a finished PDF with a public gallery template.',
    arguments: [
      { name: 'slug', description: 'The public template, e.g. invoice-classic (list_public_templates lists them).', required: true },
      { name: 'details', description: 'The facts to put in the document, in any form.', required: true },
      { name: 'color', description: "One of the template's colors.", required: false },
    ],
    text: ({ slug, details, color }) =>
      [
        `Call \`get_public_template\` with slug "${slug}" and read its schema, sample_data and instructions.`,
        `Build \`data\` for it from these details, following the schema exactly:\n\n${details}`,
        `Call \`render_public_template\` with slug "${slug}", the data${color ? ` and color "${color}"` : ''}.`,
        'On schema_validation_failed, fix the missing_fields and type_errors and render again. Give the user the pdf_url.',
      ].join('\n\n'),
  },
];

export class Prompts {
  list(): Array<Omit<Prompt, 'text'>> {
    return PROMPTS.map(({ name, title, description, arguments: args }) => ({ name, title, description, arguments: args }));
  }

  get(name: unknown, args: unknown): { description: string; messages: Array<Record<string, unknown>> } {
    const prompt = PROMPTS.find((p) => p.name === name);
    if (!prompt) {
      throw new RpcError(RPC.INVALID_PARAMS, `Invalid params: unknown prompt "${String(name)}"`, {
        prompts: PROMPTS.map((p) => p.name),
      });
    }
    if (args !== undefined && (typeof args !== 'object' || args === null || Array.isArray(args))) {
      throw new RpcError(RPC.INVALID_PARAMS, 'Invalid params: "arguments" must be an object of strings');
    }
    const given = (args ?? {}) as Record<string, unknown>;
    const values: Record<string, string> = {};
    for (const arg of prompt.arguments) {
      const value = given[arg.name];
      if (value === undefined && arg.required) {
        throw new RpcError(RPC.INVALID_PARAMS, `Invalid params: prompt argument "${arg.name}" is required`);
      }
      if (value !== undefined && typeof value !== 'string') {
        throw new RpcError(RPC.INVALID_PARAMS, `Invalid params: prompt argument "${arg.name}" must be a string`);
      }
      if (value !== undefined) values[arg.name] = value;
    }
    return {
      description: prompt.description,
      messages: [{ role: 'user', content: { type: 'text', text: prompt.text(values) } }],
    };
  }
}
