import { describeProblem } from '../client';
import { EXIT, exitCodeForStatus, type ExitCode } from './exit-codes';

/** A command that ends with a message on stderr and an exit code other than 0. */
export class CliError extends Error {
  constructor(
    message: string,
    readonly exitCode: ExitCode,
  ) {
    super(message);
  }

  static usage(message: string): CliError {
    return new CliError(message, EXIT.usage);
  }

  /** The server refused: its problem document, readable, and the code for its status. */
  static fromAnswer(error: unknown, response: Response): CliError {
    return new CliError(
      describeProblem(error, response.status),
      exitCodeForStatus(response.status),
    );
  }
}

/** An openapi-fetch answer: its data, or a CliError for its problem. */
export function dataOf<T>(answer: { data?: T; error?: unknown; response: Response }): T {
  if (answer.error !== undefined || answer.data === undefined) {
    throw CliError.fromAnswer(answer.error, answer.response);
  }
  return answer.data;
}
