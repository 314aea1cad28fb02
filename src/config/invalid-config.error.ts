/** A bad environment variable: the message is the one line an operator sees at boot. */
export class InvalidConfigError extends Error {
  constructor(
    readonly variable: string,
    problem: string,
  ) {
    super(`Invalid configuration: ${variable} ${problem}`);
    this.name = 'InvalidConfigError';
  }
}
