/**
 * The scripts of the README's CI guide, found by the `<!-- ci-recipe: NAME -->` marker before each fenced block, so
 * the test runs the very text a reader copies.
 */
export interface CiRecipe {
  /** The fence's info string: `sh` for a script, `console` for a transcript. */
  lang: string;
  /** The block's lines without the indentation of its fence (a block inside a list item is indented). */
  text: string;
}

export function readRecipe(markdown: string, name: string): CiRecipe {
  const lines = markdown.split('\n');
  const marker = lines.findIndex((l) => l.trim() === `<!-- ci-recipe: ${name} -->`);
  if (marker === -1) throw new Error(`README.md has no recipe "${name}"`);
  const open = lines.findIndex((l, i) => i > marker && l.trim() !== '');
  const fence = /^( *)```(\w+)$/.exec(lines[open] ?? '');
  if (!fence) throw new Error(`the recipe "${name}" is not followed by a fenced code block`);
  const [, indent = '', lang = ''] = fence;
  const close = lines.findIndex((l, i) => i > open && l === `${indent}\`\`\``);
  if (close === -1) throw new Error(`the code block of the recipe "${name}" is not closed`);
  const body = lines.slice(open + 1, close).map((l) => (l.startsWith(indent) ? l.slice(indent.length) : l));
  return { lang, text: `${body.join('\n')}\n` };
}
