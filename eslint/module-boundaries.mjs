import { existsSync, statSync } from 'node:fs';
import { basename, dirname, join, relative, resolve, sep } from 'node:path';

/**
 * The project's own lint rules for its module structure (see docs/architecture.md):
 *
 * - `module-index`: a file under src/ reaches another module only through that module's
 *   public index (`../schedules`, never `../schedules/schedule.mapper`). The one exception is
 *   an entity naming another module's entity for a relation.
 * - `database-access`: only repositories (`*.repository.ts`), entities and the database module
 *   itself touch the database libraries or the SqlRunner; services and roles hold a `Tx` at most.
 */

const SRC = resolve(import.meta.dirname, '..', 'src');

/** `src/<module>/...` → module name; a root file (src/main.ts) → '' ; outside src → null. */
function moduleOf(file) {
  const rel = relative(SRC, file);
  if (rel.startsWith('..') || rel === '') return null;
  const parts = rel.split(sep);
  return parts.length > 1 ? parts[0] : '';
}

function resolvesTo(fromFile, spec) {
  return resolve(dirname(fromFile), spec);
}

function isModuleRoot(target, module) {
  const root = join(SRC, module);
  return target === root || target === join(root, 'index');
}

function isDirectory(path) {
  return existsSync(path) && statSync(path).isDirectory();
}

const moduleIndex = {
  meta: {
    type: 'problem',
    docs: { description: 'import another module only through its public index.ts' },
    messages: {
      deep: "'{{spec}}' reaches into module '{{module}}': import it from its index ('{{index}}')",
    },
    schema: [],
  },
  create(context) {
    const file = context.filename;
    const own = moduleOf(file);
    if (own === null) return {};
    const check = (node) => {
      const spec = node.source?.value;
      if (typeof spec !== 'string' || !spec.startsWith('.')) return;
      const target = resolvesTo(file, spec);
      const module = moduleOf(target + '.ts') ?? moduleOf(target);
      if (module === null || module === '' || module === own) return;
      if (isModuleRoot(target, module) && (isDirectory(target) || target.endsWith('index'))) return;
      if (file.endsWith('.entity.ts') && spec.endsWith('.entity')) return;
      const index = relative(dirname(file), join(SRC, module));
      context.report({
        node: node.source,
        messageId: 'deep',
        data: { spec, module, index: index.startsWith('.') ? index : `./${index}` },
      });
    };
    return { ImportDeclaration: check, ExportNamedDeclaration: check, ExportAllDeclaration: check };
  },
};

const DATABASE_PACKAGES = new Set(['typeorm', '@nestjs/typeorm', 'pg']);

function mayTouchDatabase(file) {
  const name = basename(file);
  const module = moduleOf(file);
  return (
    name.endsWith('.repository.ts') ||
    name.endsWith('.entity.ts') ||
    module === 'database' ||
    module === 'cli' ||
    (module === '' && name === 'schema.ts')
  );
}

const databaseAccess = {
  meta: {
    type: 'problem',
    docs: { description: 'only repositories run SQL' },
    messages: {
      package:
        "'{{name}}' is database access: only *.repository.ts files (and entities) may use it; pass a Tx from Transactions instead",
      runner: 'SqlRunner runs SQL: only *.repository.ts files may hold it',
    },
    schema: [],
  },
  create(context) {
    const file = context.filename;
    if (moduleOf(file) === null || mayTouchDatabase(file)) return {};
    return {
      ImportDeclaration(node) {
        const spec = node.source.value;
        if (DATABASE_PACKAGES.has(spec)) {
          context.report({ node: node.source, messageId: 'package', data: { name: spec } });
          return;
        }
        if (!spec.startsWith('.')) return;
        if (moduleOf(resolvesTo(file, spec)) !== 'database' && !spec.endsWith('database')) return;
        for (const s of node.specifiers) {
          if (s.type === 'ImportSpecifier' && s.imported.name === 'SqlRunner') {
            context.report({ node: s, messageId: 'runner' });
          }
        }
      },
    };
  },
};

export default {
  meta: { name: 'dueline' },
  rules: { 'module-index': moduleIndex, 'database-access': databaseAccess },
};
