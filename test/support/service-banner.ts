/** The banner's first line, printed once the service listens: `dueline is listening on <url>`. */
const LISTENING_LINE = /^dueline is listening on http:\/\/\S+:(\d+) /m;

/**
 * The port a service started with PORT=0 bound, read from what it printed so far; null before it
 * listens. Tests start it that way because a port probed free beforehand can be handed to another
 * test file's outgoing connection before the service binds it (EADDRINUSE).
 */
export function listeningPort(stdout: string): number | null {
  const match = LISTENING_LINE.exec(stdout);
  return match ? Number(match[1]) : null;
}
