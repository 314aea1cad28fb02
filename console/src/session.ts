import { createDuelineClient, describeProblem, type DuelineClient } from '../../src/client';

/** Who signed in: a tenant (its API key) or the operator (the admin token). */
export type Role = 'tenant' | 'admin';

export interface Session {
  role: Role;
  client: DuelineClient;
}

const KEY = 'dueline.console.token';
const ROLE = 'dueline.console.role';

/**
 * The key lives in sessionStorage: gone when the tab closes, never in localStorage or a cookie,
 * and sent only as `Authorization: Bearer` to this origin.
 */
export function restoreSession(): Session | null {
  const token = sessionStorage.getItem(KEY);
  const role = sessionStorage.getItem(ROLE);
  if (!token || (role !== 'tenant' && role !== 'admin')) return null;
  return open(token, role);
}

export function saveSession(token: string, role: Role): Session {
  sessionStorage.setItem(KEY, token);
  sessionStorage.setItem(ROLE, role);
  return open(token, role);
}

export function clearSession(): void {
  sessionStorage.removeItem(KEY);
  sessionStorage.removeItem(ROLE);
}

function open(token: string, role: Role): Session {
  return { role, client: createDuelineClient({ baseUrl: location.origin, apiKey: token }) };
}

/** A refused call, as the console shows it: the problem's own words and its field errors. */
export class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly problem: unknown,
  ) {
    super(describeProblem(problem, status));
  }

  get fieldErrors(): Record<string, string> {
    const errors = (this.problem as { errors?: Array<{ field: string; message: string }> })?.errors;
    return Object.fromEntries((errors ?? []).map((e) => [e.field, e.message]));
  }
}

/** The data of an openapi-fetch answer, or an ApiError carrying its problem document. */
export function must<T>(answer: { data?: T; error?: unknown; response: Response }): T {
  if (answer.error !== undefined || answer.data === undefined) {
    throw new ApiError(answer.response.status, answer.error);
  }
  return answer.data;
}
