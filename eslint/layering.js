// The layering of src/ as a lint rule: which folders may import which (issue #14). Relative
// imports are resolved against the importing file, so the rule holds at any folder depth
// and needs no import plugin. A layer may name `except` areas inside what it forbids (the
// client of src/cli/client/ may use two pure rules of src/compile/ and nothing else of src/).
import { dirname, relative, resolve, sep } from 'node:path';

const EXTENSION = /\.(?:[cm]?[jt]s|tsx?)$/;

/** 'src/quota/plans.js' and 'src/quota/plans.ts' are the same module: 'src/quota/plans'. */
function moduleId(root, absolute) {
  return relative(root, absolute).split(sep).join('/').replace(EXTENSION, '');
}

/** True when `id` is the module `area` or lies inside the folder `area`. */
function within(id, area) {
  const bare = area.replace(EXTENSION, '');
  return id === bare || id.startsWith(`${bare}/`);
}

/** @type {import('eslint').Rule.RuleModule} */
export const layering = {
  meta: {
    type: 'problem',
    docs: { description: 'Lower layers of src/ never import upper ones' },
    schema: [
      {
        type: 'object',
        properties: {
          root: { type: 'string' },
          layers: { type: 'array' },
        },
        required: ['root', 'layers'],
        additionalProperties: false,
      },
    ],
    messages: { forbidden: '{{file}} must not import {{target}}: {{why}}' },
  },
  create(context) {
    const { root, layers } = context.options[0];
    const file = moduleId(root, context.filename);
    const rules = layers.filter((layer) => layer.from.some((area) => within(file, area)));
    if (rules.length === 0) return {};

    function check(node) {
      const source = node?.value;
      if (typeof source !== 'string' || !source.startsWith('.')) return;
      const target = moduleId(root, resolve(dirname(context.filename), source));
      for (const layer of rules) {
        if (!layer.forbid.some((area) => within(target, area))) continue;
        if (layer.except?.some((area) => within(target, area))) continue;
        context.report({ node, messageId: 'forbidden', data: { file, target, why: layer.why } });
        return;
      }
    }

    return {
      ImportDeclaration: (node) => check(node.source),
      ExportNamedDeclaration: (node) => check(node.source),
      ExportAllDeclaration: (node) => check(node.source),
      ImportExpression: (node) => check(node.source),
      TSImportType: (node) => check(node.argument?.literal ?? node.argument),
    };
  },
};

export default { rules: { layering } };
