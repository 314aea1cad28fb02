import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve, sep } from 'node:path';
import * as ts from 'typescript';

/**
 * The module structure, checked on the source itself: every module has a public index.ts, the
 * modules import each other without cycles (entity relations, the one named exception, are left
 * out), and SQL text stays in repositories, their *.sql.ts files and migrations.
 */
const SRC = resolve(__dirname, '../../../src');

function sourceFiles(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) return sourceFiles(path);
    // The lint test's probe files come and go while it runs.
    return name.endsWith('.ts') && !name.startsWith('zz-lint-probe') ? [path] : [];
  });
}

const files = sourceFiles(SRC);
/** Entry points beside main.ts: programs of their own, imported by nobody. */
const ENTRY_POINTS = ['cli'];
const modules = readdirSync(SRC).filter((name) => statSync(join(SRC, name)).isDirectory());
const moduleOf = (path: string): string | null => {
  const rel = relative(SRC, path);
  const parts = rel.split(sep);
  return !rel.startsWith('..') && parts.length > 1 ? parts[0] : null;
};

/** The module an import lands in: its index (`../admission`) or a file inside it. */
const importedModule = (target: string): string | null => {
  const [first] = relative(SRC, target).split(sep);
  return modules.includes(first) ? first : null;
};

/** Module → the modules it imports (type-only imports included: they are dependencies too). */
function moduleGraph(): Map<string, Set<string>> {
  const graph = new Map(modules.map((m) => [m, new Set<string>()]));
  for (const file of files) {
    const from = moduleOf(file);
    if (!from) continue;
    const { importedFiles } = ts.preProcessFile(readFileSync(file, 'utf8'), true, true);
    for (const { fileName } of importedFiles) {
      if (!fileName.startsWith('.')) continue;
      // An entity naming another module's entity (a relation) is the one allowed exception.
      if (file.endsWith('.entity.ts') && fileName.endsWith('.entity')) continue;
      const to = importedModule(resolve(dirname(file), fileName));
      if (to && to !== from) graph.get(from)!.add(to);
    }
  }
  return graph;
}

/** Every cycle's members, by Tarjan's strongly connected components. */
function cycles(graph: Map<string, Set<string>>): string[][] {
  let index = 0;
  const indices = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const found: string[][] = [];
  const visit = (node: string) => {
    indices.set(node, index);
    low.set(node, index++);
    stack.push(node);
    onStack.add(node);
    for (const next of graph.get(node) ?? []) {
      if (!indices.has(next)) {
        visit(next);
        low.set(node, Math.min(low.get(node)!, low.get(next)!));
      } else if (onStack.has(next)) {
        low.set(node, Math.min(low.get(node)!, indices.get(next)!));
      }
    }
    if (low.get(node) === indices.get(node)) {
      const members: string[] = [];
      let member: string;
      do {
        member = stack.pop()!;
        onStack.delete(member);
        members.push(member);
      } while (member !== node);
      if (members.length > 1 || graph.get(node)!.has(node)) found.push(members.sort());
    }
  };
  for (const node of graph.keys()) if (!indices.has(node)) visit(node);
  return found;
}

describe('module structure', () => {
  it('gives every module a public index.ts', () => {
    const missing = modules.filter((m) => !existsSync(join(SRC, m, 'index.ts')));
    expect(missing.filter((m) => !ENTRY_POINTS.includes(m))).toEqual([]);
  });

  it('has no import cycle between modules', () => {
    expect(cycles(moduleGraph())).toEqual([]);
  });

  it('sees the dependencies it checks', () => {
    const graph = moduleGraph();
    expect([...graph.get('worker')!]).toEqual(expect.arrayContaining(['admission', 'execution']));
    expect([...graph.get('schedules')!]).toContain('occurrences');
    expect([...graph.get('occurrences')!]).not.toContain('schedules');
  });

  it('finds a cycle when there is one (the check itself works)', () => {
    const graph = new Map([
      ['a', new Set(['b'])],
      ['b', new Set(['c'])],
      ['c', new Set(['a'])],
      ['d', new Set(['a'])],
    ]);
    expect(cycles(graph)).toEqual([['a', 'b', 'c']]);
  });

  it('keeps record modules from depending on the roles that compose them', () => {
    const graph = moduleGraph();
    const roles = ['api', 'poller', 'relay', 'worker'];
    const offenders = [...graph].flatMap(([from, to]) =>
      roles.includes(from)
        ? []
        : [...to].filter((m) => roles.includes(m)).map((m) => `${from}→${m}`),
    );
    expect(offenders).toEqual([]);
  });

  it('keeps SQL statements in repositories, their *.sql.ts files and the database module', () => {
    const statement = /`\s*(SELECT|INSERT INTO|UPDATE|DELETE FROM|WITH)\s[\s\S]*?`/;
    const outside = files.filter((file) => {
      const name = file.split(sep).pop()!;
      if (/\.(repository|sql)\.ts$/.test(name) || moduleOf(file) === 'database') return false;
      return statement.test(readFileSync(file, 'utf8'));
    });
    expect(outside.map((file) => relative(SRC, file))).toEqual([]);
  });
});
