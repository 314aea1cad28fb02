import js from '@eslint/js';
import prettier from 'eslint-config-prettier';
import tseslint from 'typescript-eslint';

export default tseslint.config(
  {
    ignores: [
      'dist/',
      'node_modules/',
      'coverage/',
      '.data/',
      'bench/results/',
      '**/*.js',
      '**/*.mjs',
    ],
  },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    languageOptions: {
      parserOptions: { projectService: true, tsconfigRootDir: import.meta.dirname },
    },
    rules: {
      '@typescript-eslint/no-floating-promises': 'error',
      '@typescript-eslint/no-misused-promises': ['error', { checksVoidReturn: false }],
      '@typescript-eslint/switch-exhaustiveness-check': [
        'error',
        { considerDefaultExhaustiveForUnions: true },
      ],
      '@typescript-eslint/no-unused-vars': [
        'error',
        { argsIgnorePattern: '^_', varsIgnorePattern: '^_' },
      ],
      '@typescript-eslint/no-explicit-any': 'error',
      'no-console': 'error',
      // Modules talk through their exported service, never each other's repositories.
      'no-restricted-imports': [
        'error',
        {
          patterns: [
            { group: ['**/*.repository'], message: "use the module's service, not its repository" },
          ],
        },
      ],
    },
  },
  {
    files: ['src/main.ts', 'src/database/cli/**', 'test/**', 'bench/**'],
    rules: { 'no-console': 'off', 'no-restricted-imports': 'off' },
  },
  {
    files: ['src/**/*.service.ts', 'src/**/*.module.ts'],
    rules: { 'no-restricted-imports': 'off' },
  },
  {
    files: ['test/**'],
    rules: {
      '@typescript-eslint/no-require-imports': 'off',
      '@typescript-eslint/no-explicit-any': 'off',
    },
  },
  prettier,
);
