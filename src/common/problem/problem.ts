import { FieldError } from './domain-errors';

export const PROBLEM_CONTENT_TYPE = 'application/problem+json';

/** RFC 9457 problem document, the body of every 4xx and 5xx answer. */
export interface Problem {
  type: string;
  title: string;
  status: number;
  detail: string;
  instance?: string;
  errors?: FieldError[];
  [extension: string]: unknown;
}

export function problemType(slug: string): string {
  return `https://dueline.dev/problems/${slug}`;
}
