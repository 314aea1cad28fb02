import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join, resolve } from 'node:path';

/** Every variable the configuration reads is documented in .env.example, and nothing more. */
describe('.env.example', () => {
  const root = resolve(__dirname, '../..');
  const source = readFileSync(join(root, 'src/config/app-config.ts'), 'utf8');
  const read = new Set(
    [...source.matchAll(/(?:int|integer|optional|oneOf)\(\s*(?:env,\s*)?'([A-Z_]+)'/g)].map(
      (m) => m[1],
    ),
  );
  read.add('ROLES');
  read.add('TARGET_ALLOWED_HOSTS');
  const documented = new Set(
    [...readFileSync(join(root, '.env.example'), 'utf8').matchAll(/^#? ?([A-Z][A-Z0-9_]+)=/gm)].map(
      (m) => m[1],
    ),
  );

  it('documents every variable the configuration reads', () => {
    expect([...read].filter((name) => !documented.has(name)).sort()).toEqual([]);
    expect(read.size).toBeGreaterThan(25);
  });

  it('documents no variable the configuration ignores', () => {
    expect([...documented].filter((name) => !read.has(name)).sort()).toEqual([]);
  });

  it('is the only place outside config/ that process.env is read (main and the CLIs pass it in)', () => {
    const files = (dir: string): string[] =>
      readdirSync(dir).flatMap((name) => {
        const path = join(dir, name);
        return statSync(path).isDirectory() ? files(path) : path.endsWith('.ts') ? [path] : [];
      });
    const readers = files(join(root, 'src'))
      .filter((file) => !file.includes('/src/config/'))
      .filter((file) => /process\.env\b/.test(readFileSync(file, 'utf8')))
      .map((file) => file.slice(root.length + 1));
    // The dueline CLI hands its environment (DUELINE_URL, DUELINE_API_KEY: the client's, not the
    // service's; documented in its --help and the README) to runCli, which reads nothing else.
    expect(readers.sort()).toEqual([
      'src/cli/dueline.ts',
      'src/cli/with-database.ts',
      'src/main.ts',
    ]);
  });
});
