export { runCli, HELP } from './cli';
export { EXIT, type ExitCode } from './exit-codes';
export type { Io } from './output';
