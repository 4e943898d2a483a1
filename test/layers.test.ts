/**
 * The layer order of src/ as data, and docs/architecture.md held to it: a module imports only from its own layer or
 * the layers below it, whatever the kind of import (static, dynamic `import()`, type-only). The files in src/ itself
 * are one base layer, but for the entry `cli.ts` on top. Between the folders, the imports that run form no cycle.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join, normalize, relative, sep } from 'node:path';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';

const SRC = join(__dirname, '..', 'src');
const PAGE = join(__dirname, '..', 'docs', 'architecture.md');

/** Every module of src/ that is not named elsewhere: the base layer. */
const BASE = '*.ts';

/**
 * Top to bottom. Each layer is a set of folders (`http/`) and files of src/ itself (`cli.ts`); folders in one layer
 * may import each other (no cycle among the imports that run, see below).
 */
const LAYERS: readonly (readonly string[])[] = [
  ['exe/'],
  ['cli.ts'],
  ['commands/'],
  ['argv/'],
  ['paginate/'],
  ['apiclient/'],
  ['oauth/'],
  ['store/', 'output/'],
  ['http/'],
  [BASE],
];

/**
 * Imports the layer order allows but the design does not: the command-line machinery knows nothing of HTTP (a
 * request's defaults reach an option from a module below both), and the HTTP client is handed its options rather than
 * reading the settings.
 */
const FORBIDDEN: readonly { from: string; to: string }[] = [
  { from: 'argv/', to: 'http/' },
  { from: 'http/', to: 'config.ts' },
];

type Kind = 'static' | 'dynamic' | 'type';

interface Import {
  /** Paths relative to src/, with `/` and the `.ts` of the source file. */
  from: string;
  to: string;
  kind: Kind;
}

/**
 * The relative imports a module's text makes, by kind, read by the TypeScript parser: every form counts, whatever its
 * quotes (single, double, template), and whether it imports, re-exports or loads when it runs.
 */
function importsIn(text: string): { specifier: string; kind: Kind }[] {
  const found: { specifier: string; kind: Kind }[] = [];
  const add = (node: ts.Node | undefined, kind: Kind): void => {
    if (node && ts.isStringLiteralLike(node) && node.text.startsWith('.')) found.push({ specifier: node.text, kind });
  };
  const visit = (node: ts.Node): void => {
    if (ts.isImportDeclaration(node)) {
      add(node.moduleSpecifier, typeOnlyImport(node.importClause) ? 'type' : 'static');
    } else if (ts.isExportDeclaration(node)) {
      add(node.moduleSpecifier, node.isTypeOnly ? 'type' : 'static');
    } else if (ts.isImportTypeNode(node) && ts.isLiteralTypeNode(node.argument)) {
      // `typeof import('./x')` in a type is a type-only import.
      add(node.argument.literal, 'type');
    } else if (ts.isCallExpression(node) && node.expression.kind === ts.SyntaxKind.ImportKeyword) {
      add(node.arguments[0], 'dynamic');
    }
    ts.forEachChild(node, visit);
  };
  visit(ts.createSourceFile('module.ts', text, ts.ScriptTarget.Latest, true));
  return found;
}

/** `import type …`, or only `type` names in braces: erased from the output (verbatimModuleSyntax keeps the rest). */
function typeOnlyImport(clause: ts.ImportClause | undefined): boolean {
  if (!clause) return false;
  if (clause.isTypeOnly) return true;
  const named = clause.namedBindings;
  return (
    clause.name === undefined &&
    named !== undefined &&
    ts.isNamedImports(named) &&
    named.elements.length > 0 &&
    named.elements.every((e) => e.isTypeOnly)
  );
}

function sourceFiles(): string[] {
  return readdirSync(SRC, { recursive: true, encoding: 'utf8' })
    .filter((f) => f.endsWith('.ts'))
    .map((f) => f.split(sep).join('/'));
}

function allImports(): Import[] {
  const out: Import[] = [];
  for (const from of sourceFiles()) {
    for (const { specifier, kind } of importsIn(readFileSync(join(SRC, from), 'utf8'))) {
      const target = normalize(join(SRC, dirname(from), specifier));
      out.push({ from, to: relative(SRC, target).split(sep).join('/').replace(/\.js$/, '.ts'), kind });
    }
  }
  return out;
}

/** The folder (`http/`) or file of src/ itself (`config.ts`) that a module belongs to. */
function moduleOf(file: string): string {
  const slash = file.indexOf('/');
  return slash === -1 ? file : file.slice(0, slash + 1);
}

/** The index of a module's layer in `layers`, 0 at the top; undefined for one that no layer names. */
function layerOf(file: string, layers: readonly (readonly string[])[]): number | undefined {
  const module = moduleOf(file);
  const at = layers.findIndex((l) => l.includes(module));
  if (at !== -1) return at;
  return module.endsWith('/') ? undefined : layers.findIndex((l) => l.includes(BASE));
}

/** Each import that goes up the order, as `from → to (kind)`. */
function violations(imports: readonly Import[], layers: readonly (readonly string[])[]): string[] {
  const found: string[] = [];
  for (const i of imports) {
    const from = layerOf(i.from, layers);
    const to = layerOf(i.to, layers);
    if (from === undefined || to === undefined || to < from) found.push(`${i.from} → ${i.to} (${i.kind})`);
  }
  return found;
}

/** A folder of src/, or a module that sits in src/ itself. */
function nodeOf(file: string): string {
  return moduleOf(file).replace(/\/$/, '');
}

function runtimeEdges(): Map<string, Set<string>> {
  const edges = new Map<string, Set<string>>();
  for (const i of allImports()) {
    if (i.kind === 'type') continue;
    const from = nodeOf(i.from);
    const to = nodeOf(i.to);
    if (to !== from) (edges.get(from) ?? edges.set(from, new Set()).get(from)!).add(to);
  }
  return edges;
}

/** Each cycle found by a depth-first walk, as the path that closes it. */
function cycles(edges: Map<string, Set<string>>): string[][] {
  const found: string[][] = [];
  const done = new Set<string>();
  const walk = (node: string, path: string[]): void => {
    const at = path.indexOf(node);
    if (at !== -1) return void found.push([...path.slice(at), node]);
    if (done.has(node)) return;
    for (const next of edges.get(node) ?? []) walk(next, [...path, node]);
    done.add(node);
  };
  for (const node of edges.keys()) walk(node, []);
  return found;
}

/** Each pair of modules that import each other, by any kind of import, as `a ⇄ b` with a before b. */
function mutualImports(imports: readonly Import[]): string[] {
  const edges = new Set(imports.filter((i) => i.from !== i.to).map((i) => `${i.from} → ${i.to}`));
  const pairs = new Set<string>();
  for (const i of imports) {
    if (i.from < i.to && edges.has(`${i.to} → ${i.from}`)) pairs.add(`${i.from} ⇄ ${i.to}`);
  }
  return [...pairs].sort();
}

/** Each import that `FORBIDDEN` names, as `from → to (kind)`. */
function forbidden(imports: readonly Import[], rules: typeof FORBIDDEN): string[] {
  const found: string[] = [];
  for (const i of imports) {
    if (rules.some((r) => i.from.startsWith(r.from) && (i.to === r.to || i.to.startsWith(r.to))))
      found.push(`${i.from} → ${i.to} (${i.kind})`);
  }
  return found;
}

/** The table under "## Layers" in docs/architecture.md: per row, the names in its first cell and its text. */
function pageLayers(): { modules: string[]; text: string }[] {
  const page = readFileSync(PAGE, 'utf8');
  const section = page.slice(page.indexOf('\n## Layers'), page.indexOf('\n## ', page.indexOf('\n## Layers') + 1));
  const rows = section.split('\n').filter((l) => l.startsWith('|'));
  return rows.slice(2).map((row) => {
    const [first = '', text = ''] = row.split('|').slice(1);
    return { modules: [...first.matchAll(/`([^`]+)`/g)].map((m) => m[1]!), text };
  });
}

describe('layers', () => {
  it('no cycle between the folders of src/ in the imports that run', () => {
    const edges = runtimeEdges();
    expect(edges.get('commands')).toContain('argv');
    expect(cycles(edges)).toEqual([]);
  });

  it('finds a cycle when there is one', () => {
    const edges = new Map([
      ['a', new Set(['b'])],
      ['b', new Set(['c'])],
      ['c', new Set(['a'])],
    ]);
    expect(cycles(edges)).toEqual([['a', 'b', 'c', 'a']]);
  });

  it('no two modules of src/ import each other, by any kind of import, type-only too', () => {
    expect(mutualImports(allImports())).toEqual([]);
  });

  it('finds two modules that import each other when there are, whatever the kinds', () => {
    const imports: Import[] = [
      { from: 'oauth/session.ts', to: 'oauth/token-client.ts', kind: 'static' },
      { from: 'oauth/token-client.ts', to: 'oauth/session.ts', kind: 'type' },
      { from: 'commands/api/command.ts', to: 'commands/api/plan.ts', kind: 'static' },
      { from: 'commands/api/plan.ts', to: 'errors.ts', kind: 'static' },
    ];
    expect(mutualImports(imports)).toEqual(['oauth/session.ts ⇄ oauth/token-client.ts']);
  });

  it('the imports the design forbids are not made: argv/ nothing of http/, http/ nothing of config.ts', () => {
    expect(forbidden(allImports(), FORBIDDEN)).toEqual([]);
  });

  it('finds a forbidden import when there is one, of each kind', () => {
    const imports: Import[] = [
      { from: 'argv/define.ts', to: 'http/retry.ts', kind: 'static' },
      { from: 'argv/help.ts', to: 'http/types.ts', kind: 'type' },
      { from: 'http/attempt.ts', to: 'config.ts', kind: 'static' },
      { from: 'http/client.ts', to: 'config-file.ts', kind: 'static' },
      { from: 'argv/define.ts', to: 'config.ts', kind: 'static' },
      { from: 'commands/api/command.ts', to: 'http/limits.ts', kind: 'static' },
    ];
    expect(forbidden(imports, FORBIDDEN)).toEqual([
      'argv/define.ts → http/retry.ts (static)',
      'argv/help.ts → http/types.ts (type)',
      'http/attempt.ts → config.ts (static)',
    ]);
  });

  it('every folder of src/ is in one layer, and every layer names what exists', () => {
    const files = sourceFiles();
    const folders = new Set(files.map(moduleOf).filter((m) => m.endsWith('/')));
    const named = LAYERS.flat();
    expect(named.filter((m) => m !== BASE && !folders.has(m) && !files.includes(m))).toEqual([]);
    expect([...folders].filter((f) => !named.includes(f))).toEqual([]);
    expect(new Set(named).size).toBe(named.length);
  });

  it('no import runs against the order: static, dynamic or type-only', () => {
    const imports = allImports();
    // The scan sees every kind; were it blind to one, the order could not be broken through it.
    expect(imports).toContainEqual({ from: 'commands/index.ts', to: 'commands/list/command.ts', kind: 'dynamic' });
    expect(imports).toContainEqual({ from: 'oauth/session.ts', to: 'context.ts', kind: 'type' });
    expect(imports).toContainEqual({ from: 'cli.ts', to: 'commands/index.ts', kind: 'static' });
    expect(violations(imports, LAYERS)).toEqual([]);
  });

  it('finds an import against the order when there is one, of each kind', () => {
    const text = [
      "import { a } from '../oauth/session.js';",
      "import type {\n  B,\n} from '../store/record.js';",
      "export type { C } from '../argv/define.js';",
      "export { d } from '../commands/list/command.js';",
      "import '../cli.js';",
      "const e = await import('../apiclient/client.js');",
      "type F = typeof import('../paginate/walk.js');",
      'import { g } from "../output/page-writer.js";',
      'const h = await import(`../oauth/pkce.js`);',
      "import { type I, j } from '../store/lock.js';",
      "import { type K } from '../argv/parse.js';",
      'export * from "../paginate/window.js";',
    ].join('\n');
    const found = importsIn(text);
    expect(found.map((f) => f.kind)).toEqual([
      'static',
      'type',
      'type',
      'static',
      'static',
      'dynamic',
      'type',
      'static',
      'dynamic',
      'static',
      'type',
      'static',
    ]);
    const imports = found.map(({ specifier, kind }) => ({
      from: 'http/client.ts',
      to: normalize(join('http', specifier)).replace(/\.js$/, '.ts'),
      kind,
    }));
    expect(violations(imports, LAYERS)).toEqual([
      'http/client.ts → oauth/session.ts (static)',
      'http/client.ts → store/record.ts (type)',
      'http/client.ts → argv/define.ts (type)',
      'http/client.ts → commands/list/command.ts (static)',
      'http/client.ts → cli.ts (static)',
      'http/client.ts → apiclient/client.ts (dynamic)',
      'http/client.ts → paginate/walk.ts (type)',
      'http/client.ts → output/page-writer.ts (static)',
      'http/client.ts → oauth/pkce.ts (dynamic)',
      'http/client.ts → store/lock.ts (static)',
      'http/client.ts → argv/parse.ts (type)',
      'http/client.ts → paginate/window.ts (static)',
    ]);
    // Down the order, within a layer and within the base: no violation. A folder no layer names is one.
    const fine = [
      { from: 'cli.ts', to: 'errors.ts', kind: 'static' as const },
      { from: 'commands/list/command.ts', to: 'paginate/walk.ts', kind: 'static' as const },
      { from: 'config.ts', to: 'errors.ts', kind: 'static' as const },
    ];
    expect(violations(fine, LAYERS)).toEqual([]);
    expect(violations([{ from: 'new/x.ts', to: 'errors.ts', kind: 'static' }], LAYERS)).toHaveLength(1);
  });

  it('docs/architecture.md shows these layers in this order and names every base module', () => {
    const rows = pageLayers();
    expect(rows.map((r) => r.modules)).toEqual(LAYERS);
    const base = rows.at(-1)!.text;
    const rootFiles = sourceFiles().filter((f) => !f.includes('/') && !LAYERS.flat().includes(f));
    expect(rootFiles.filter((f) => !base.includes(`\`${f}\``))).toEqual([]);
  });

  it("a command's code is its own: no command's folder imports another's, and each loads when its name is read, but token's, which is in the entry chunk", () => {
    const folder = (file: string) => /^commands\/([^/]+)\//.exec(file)?.[1];
    const imports = allImports();
    const across = imports.filter((i) => folder(i.from) && folder(i.to) && folder(i.from) !== folder(i.to));
    expect(across).toEqual([]);
    const loaded = imports.filter((i) => i.from === 'commands/index.ts' && folder(i.to) !== undefined);
    expect(loaded.filter((i) => i.kind !== 'dynamic')).toEqual([
      { from: 'commands/index.ts', to: 'commands/token/command.ts', kind: 'static' },
    ]);
    const folders = new Set(
      sourceFiles()
        .map(folder)
        .filter((f) => f !== undefined),
    );
    const dynamic = new Set(loaded.filter((i) => i.kind === 'dynamic').map((i) => folder(i.to)));
    expect([...folders].filter((f) => f !== 'token' && !dynamic.has(f))).toEqual([]);
  });

  it('only cli.ts reads argv and the standard streams, listens for signals and ends the process', () => {
    const touching = sourceFiles().filter((f) =>
      /\bprocess\.(argv|stdin|stdout|stderr|on|once|exit|exitCode)\b/.test(readFileSync(join(SRC, f), 'utf8')),
    );
    expect(touching).toEqual(['cli.ts']);
  });
});
