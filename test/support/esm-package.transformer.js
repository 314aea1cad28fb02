// Compiles an ESM-only dependency to CommonJS for Jest (see jest.config.js). TypeScript's
// transpiler converts the module syntax; what CommonJS has no syntax for is rewritten first:
// `import.meta` becomes the values Node gives a CommonJS module, and a module's own
// `const require = createRequire(...)` is renamed so it cannot clash with the CommonJS wrapper's
// `require` (in ESM source, `require` can only be such a local binding).
const { createHash } = require('node:crypto');
const ts = require('typescript');

const VERSION = '4';
const HEADER =
  "const __importMeta = { url: require('node:url').pathToFileURL(__filename).href, " +
  'dirname: __dirname, filename: __filename, ' +
  "resolve: (s) => require('node:url').pathToFileURL(require.resolve(s)).href };";

function rewrite(source) {
  let out = source;
  if (/\b(const|let|var)\s+require\b/.test(out)) out = out.replace(/\brequire\b/g, '__esmRequire');
  if (out.includes('import.meta')) {
    out = HEADER + out.replace(/import\.meta\b/g, '__importMeta');
  }
  return out;
}

module.exports = {
  process(source, filename) {
    const { outputText, sourceMapText } = ts.transpileModule(rewrite(source), {
      fileName: filename,
      compilerOptions: {
        module: ts.ModuleKind.CommonJS,
        target: ts.ScriptTarget.ES2022,
        allowJs: true,
        esModuleInterop: true,
        sourceMap: true,
      },
    });
    return { code: outputText, map: sourceMapText };
  },
  getCacheKey(source, filename) {
    return createHash('sha1').update(VERSION).update(filename).update(source).digest('hex');
  },
};
