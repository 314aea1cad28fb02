import { createConfig, lintFromString } from '@redocly/openapi-core';

export interface LintFinding {
  severity: 'error' | 'warn';
  rule: string;
  message: string;
  pointer: string;
}

/**
 * Redocly's `recommended` ruleset (what `redocly lint` applies by default) over a document.
 * The suite requires no error; warnings are reported.
 */
export async function lintOpenApi(document: object): Promise<LintFinding[]> {
  const config = await createConfig({ extends: ['recommended'] });
  const problems = await lintFromString({
    source: JSON.stringify(document),
    absoluteRef: 'openapi.json',
    config,
  });
  return problems
    .filter((p) => p.severity === 'error' || p.severity === 'warn')
    .map((p) => ({
      severity: p.severity as 'error' | 'warn',
      rule: p.ruleId,
      message: p.message,
      pointer: p.location[0]?.pointer ?? '',
    }));
}
