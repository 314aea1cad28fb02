import pino from 'pino';

/** The command-line tools log like the service: structured JSON lines on stdout. */
export const cliLogger = pino({ level: 'info', base: { tool: 'dueline-cli' } });
