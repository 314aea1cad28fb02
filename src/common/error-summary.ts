/**
 * What a log line may say about an error: its class, message and code. Never the whole object:
 * driver errors carry connection parameters, and HTTP errors can carry request bodies.
 */
export function errorSummary(error: unknown): { type: string; message: string; code?: string } {
  if (error instanceof Error) {
    const code = (error as { code?: unknown }).code;
    return {
      type: error.constructor.name,
      message: error.message,
      ...(typeof code === 'string' ? { code } : {}),
    };
  }
  return { type: typeof error, message: String(error) };
}
