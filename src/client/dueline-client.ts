import createClient, { type Client } from 'openapi-fetch';
import type { components, paths } from './api-contract.generated';

export type DuelineClient = Client<paths>;
export type Schemas = components['schemas'];
export type Problem = Schemas['ProblemDto'];

export interface DuelineClientOptions {
  /** The server's origin, e.g. `http://localhost:3000` (empty: same origin, in a browser). */
  baseUrl: string;
  /** A tenant API key, or the admin token for `/tenants`. */
  apiKey?: string;
  fetch?: (request: Request) => Promise<Response>;
}

/**
 * A client typed by the contract the api role publishes: paths, parameters, bodies and answers
 * all come from `api-contract.generated.ts`, so a call that the server would not accept does not
 * compile. The CLI and the web console both use it; neither calls anything else.
 */
export function createDuelineClient(options: DuelineClientOptions): DuelineClient {
  const client = createClient<paths>({
    baseUrl: options.baseUrl.replace(/\/+$/, ''),
    ...(options.fetch ? { fetch: options.fetch } : {}),
  });
  if (options.apiKey) {
    const authorization = `Bearer ${options.apiKey}`;
    client.use({
      onRequest({ request }) {
        request.headers.set('Authorization', authorization);
        return request;
      },
    });
  }
  return client;
}

/** Whether an error body is an RFC 9457 problem document of ours. */
export function isProblem(value: unknown): value is Problem {
  if (typeof value !== 'object' || value === null) return false;
  const { status, title } = value as Record<string, unknown>;
  return typeof status === 'number' && typeof title === 'string';
}

/**
 * One readable line for an error answer: "409 Stale revision: the schedule is at revision 4"
 * followed by each field error. Anything else (a proxy's HTML page) is summarised by status.
 */
export function describeProblem(error: unknown, status?: number): string {
  if (!isProblem(error)) {
    return status ? `the server answered ${status}` : 'the server could not be reached';
  }
  const head = `${error.status} ${error.title}${error.detail ? `: ${error.detail}` : ''}`;
  const fields = (error.errors ?? []).map((e) => `  ${e.field}: ${e.message}`);
  return [head, ...fields].join('\n');
}
