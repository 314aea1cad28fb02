/**
 * Thrown when a cron expression cannot be accepted. The message is meant to be shown to the
 * API caller as-is, so it always names the offending field and value.
 */
export class InvalidCronError extends Error {
  override readonly name = 'InvalidCronError';

  constructor(
    message: string,
    readonly expression: string,
    readonly field?: string,
  ) {
    super(message);
  }
}

/** Thrown when a timezone is not an IANA zone name we are willing to schedule in. */
export class InvalidTimezoneError extends Error {
  override readonly name = 'InvalidTimezoneError';

  constructor(readonly timezone: string) {
    super(
      `Invalid timezone ${JSON.stringify(timezone)}: expected an IANA zone name such as ` +
        `"Europe/London", "America/New_York" or "UTC"`,
    );
  }
}
