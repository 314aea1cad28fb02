import { execFile } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { lintOpenApi } from '../../src/cli/openapi-lint';
import { startTestApp, TestApp } from '../support/test-app';

type Json = Record<string, unknown>;
const ROOT = join(__dirname, '../..');
const GENERATOR = join(ROOT, 'dist/src/cli/generate-client.js');

/** Runs the built generator in check mode (npm test builds first) over a document file. */
async function checkContract(document: Json): Promise<{ code: number; output: string }> {
  const file = join(mkdtempSync(join(tmpdir(), 'dueline-contract-')), 'openapi.json');
  writeFileSync(file, JSON.stringify(document));
  try {
    const { stdout } = await promisify(execFile)(
      process.execPath,
      [GENERATOR, '--check', '--document', file],
      { cwd: ROOT },
    );
    return { code: 0, output: stdout };
  } catch (error) {
    // The tool logs structured lines on stdout (like the other CLIs); stderr is Node's own.
    const failed = error as { code?: number; stdout?: string; stderr?: string };
    return { code: failed.code ?? -1, output: `${failed.stdout ?? ''}${failed.stderr ?? ''}` };
  }
}
const METHODS = ['get', 'put', 'post', 'delete', 'patch', 'options', 'head', 'trace'];

/** Every operation of the document with where it lives, for the checks below. */
function operations(document: Json): Array<{ where: string; operation: Json }> {
  const paths = document.paths as Record<string, Json>;
  return Object.entries(paths).flatMap(([path, item]) =>
    METHODS.filter((m) => item[m]).map((m) => ({
      where: `${m.toUpperCase()} ${path}`,
      operation: item[m] as Json,
    })),
  );
}

/** Every schema object reachable in the document, with its JSON pointer. */
function schemas(node: unknown, pointer = '#'): Array<{ pointer: string; schema: Json }> {
  if (typeof node !== 'object' || node === null) return [];
  const found: Array<{ pointer: string; schema: Json }> = [];
  const record = node as Json;
  if ('enum' in record) found.push({ pointer, schema: record });
  for (const [key, value] of Object.entries(record)) {
    found.push(...schemas(value, `${pointer}/${key}`));
  }
  return found;
}

/**
 * The contract clients build on: the committed typed client is what the running app's
 * /docs-json generates (a route or DTO changed without `npm run client:generate` fails here),
 * and the document is clean enough for any generator: Redocly's recommended rules pass, every
 * operation is named, every error answer is a problem document, every enum lists its values.
 */
describe('OpenAPI contract and the generated client', () => {
  let t: TestApp;
  let document: Json;

  beforeAll(async () => {
    t = await startTestApp();
    const res = await t.http.get('/docs-json');
    expect(res.status).toBe(200);
    document = res.body as Json;
  });
  afterAll(() => t.close());

  it('regenerating the client from /docs-json changes nothing', async () => {
    const result = await checkContract(document);
    expect(result).toEqual({ code: 0, output: expect.stringContaining('matches') });
  });

  it('fails the check when the document moved on without the client', async () => {
    const moved = structuredClone(document);
    (moved.info as Json).title = 'dueline, edited';
    (moved.paths as Json)['/schedules'] = undefined;
    const result = await checkContract(moved);
    expect(result.code).toBe(1);
    expect(result.output).toContain('npm run client:generate');
  });

  it('passes Redocly recommended rules with no error', async () => {
    const findings = await lintOpenApi(document);
    expect(findings.filter((f) => f.severity === 'error')).toEqual([]);
  });

  it('names every operation, uniquely', () => {
    const ids = operations(document).map(({ where, operation }) => operation.operationId ?? where);
    expect(ids.filter((id) => typeof id !== 'string' || id.includes(' '))).toEqual([]);
    expect(new Set(ids).size).toBe(ids.length);
  });

  it('documents every error answer as an application/problem+json ProblemDto', () => {
    const bad: string[] = [];
    for (const { where, operation } of operations(document)) {
      const responses = operation.responses as Record<string, Json>;
      for (const [status, response] of Object.entries(responses)) {
        if (Number(status) < 400) continue;
        const content = response.content as Record<string, Json> | undefined;
        const schema = content?.['application/problem+json']?.schema as Json | undefined;
        if (schema?.$ref !== '#/components/schemas/ProblemDto') bad.push(`${where} ${status}`);
      }
    }
    expect(bad).toEqual([]);
    // The checks above look at something: the API does document its errors.
    expect(operations(document).length).toBeGreaterThan(15);
  });

  it('lists the values of every enum', () => {
    const found = schemas(document);
    const empty = found.filter(({ schema }) => !Array.isArray(schema.enum) || !schema.enum.length);
    expect(empty.map((e) => e.pointer)).toEqual([]);
    // Run states, reasons, policies: the document has enums, and each one is spelled out.
    expect(found.length).toBeGreaterThan(10);
  });
});
