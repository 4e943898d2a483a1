/**
 * docs/architecture.md: between the folders of src/ (and the loose modules in src/ itself) the imports that run
 * form no cycle. Type-only imports are erased at build time and are left out.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join, normalize, relative } from 'node:path';
import { describe, expect, it } from 'vitest';

const SRC = join(__dirname, '..', '..', 'src');

/** A folder of src/, or a module that sits in src/ itself. */
function nodeOf(file: string): string {
  const rel = relative(SRC, file);
  return dirname(rel) === '.' ? rel.replace(/\.js$/, '.ts') : dirname(rel);
}

function runtimeEdges(): Map<string, Set<string>> {
  const edges = new Map<string, Set<string>>();
  const files = readdirSync(SRC, { recursive: true, encoding: 'utf8' }).filter((f) => f.endsWith('.ts'));
  for (const f of files) {
    const file = join(SRC, f);
    const from = nodeOf(file);
    const text = readFileSync(file, 'utf8');
    // Static imports and re-exports that are not `import type`/`export type`, and dynamic import().
    const specifiers = [
      ...text.matchAll(/^(?:import|export)(?!\s+type\b)[^;]*?from\s+'(\.[^']+)'/gms),
      ...text.matchAll(/import\(\s*'(\.[^']+)'\s*\)/g),
    ].map((m) => m[1]!);
    for (const s of specifiers) {
      const to = nodeOf(normalize(join(dirname(file), s)));
      if (to !== from) (edges.get(from) ?? edges.set(from, new Set()).get(from)!).add(to);
    }
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

describe('layers', () => {
  it('no cycle between the folders of src/ in the imports that run', () => {
    const edges = runtimeEdges();
    expect(edges.get('cmd')).toContain('commands');
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
});
