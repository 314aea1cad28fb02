import { execFileSync } from 'node:child_process';
import { rmSync, writeFileSync } from 'node:fs';
import { resolve } from 'node:path';

/**
 * The lint rules that keep the module structure (eslint/module-boundaries.mjs), run as
 * `npm run lint` runs them (the project's own config, typed linting included), on probe files
 * that break them and on probe files that keep them. A probe exists only while it is linted.
 */
const ROOT = resolve(__dirname, '../../..');
let probes = 0;

function lint(filePath: string, code: string): string[] {
  const dot = filePath.lastIndexOf('.');
  const probe = `${filePath.slice(0, filePath.lastIndexOf('/') + 1)}zz-lint-probe-${process.pid}-${probes++}${filePath.slice(filePath.lastIndexOf('/') + 1 + 'probe'.length, dot)}${filePath.slice(dot)}`;
  writeFileSync(resolve(ROOT, probe), code);
  try {
    execFileSync(
      process.execPath,
      [resolve(ROOT, 'node_modules/eslint/bin/eslint.js'), '--format', 'json', probe],
      { cwd: ROOT, encoding: 'utf8' },
    );
    return [];
  } catch (error) {
    const out = (error as { stdout?: string }).stdout ?? '[]';
    const [result] = JSON.parse(out) as Array<{ messages: Array<{ ruleId: string | null }> }>;
    return result.messages.map((m) => m.ruleId ?? 'parse');
  } finally {
    rmSync(resolve(ROOT, probe), { force: true });
  }
}

describe('lint: module boundaries and database access', () => {
  jest.setTimeout(60_000);

  it("refuses an import of another module's internals", () => {
    const code = `import { toSchedule } from '../schedules/schedule.mapper';\nexport const x = toSchedule;\n`;
    expect(lint('src/worker/probe.ts', code)).toContain('dueline/module-index');
  });

  it("accepts the other module's index, and an entity relation to another module's entity", () => {
    expect(
      lint(
        'src/worker/probe.ts',
        `import { SchedulesService } from '../schedules';\nexport const x = SchedulesService;\n`,
      ),
    ).toEqual([]);
    expect(
      lint(
        'src/attempts/probe.entity.ts',
        `import { OccurrenceEntity } from '../occurrences/occurrence.entity';\nexport const x = OccurrenceEntity;\n`,
      ),
    ).toEqual([]);
  });

  it('refuses database access outside repositories', () => {
    const typeorm = `import { DataSource } from 'typeorm';\nexport const x = DataSource;\n`;
    const runner = `import { SqlRunner } from '../database';\nexport const x = SqlRunner;\n`;
    expect(lint('src/execution/probe.service.ts', typeorm)).toContain('dueline/database-access');
    expect(lint('src/execution/probe.service.ts', runner)).toContain('dueline/database-access');
    expect(lint('src/execution/probe.repository.ts', runner)).toEqual([]);
  });
});
