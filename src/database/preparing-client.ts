import { preparedName } from './prepared-statements';
import { PrimaryClient } from './primary-client';

/**
 * A PrimaryClient for pools whose callers send plain text with parameters (pg-boss's own pool):
 * each such statement runs as the named prepared statement prepared-statements.ts gives it, so
 * Postgres parses and plans it once per connection instead of at every call. pg-boss's fetch,
 * job deletion and completion are run for every batch of runs; the benchmark's 1,000-tenant
 * phase measured 0.2-0.4 ms of planning per call of each, about a tenth of Postgres's CPU there.
 * Only a text sent with a values array is named: that already goes by the extended protocol
 * (one statement, no multi-statement strings), which a named statement keeps; a text sent alone
 * (the simple protocol, as pg-boss's migrations are) is left as it is.
 */
export class PreparingPrimaryClient extends PrimaryClient {
  // pg's query() has a dozen overloads; this one only rewrites (text, values[, callback]) into
  // a named config object, which PrimaryClient.query then watches for a changed result type.
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  override query(...args: any[]): any {
    const [text, values, ...rest] = args as unknown[];
    if (typeof text === 'string' && Array.isArray(values)) {
      const name = preparedName(text);
      if (name !== null) return super.query({ name, text, values }, ...rest);
    }
    return super.query(...args);
  }
}
