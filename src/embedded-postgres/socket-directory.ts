import { join } from 'node:path';

/** A Unix socket's path may hold at most 107 bytes (sun_path, less its terminating NUL). */
const SOCKET_PATH_MAX_BYTES = 107;

/**
 * Where the embedded server puts its Unix socket (`.s.PGSQL.<port>`): the cluster directory, the
 * server's own, which it can write as whichever user it runs as and no other program cleans up.
 * Null (TCP only) when the socket's path would be longer than the kernel allows, or when the
 * directory's name has anything but letters, digits and `_ . - /`: that spares the quoting a
 * comma, a space or a quote would need in `unix_socket_directories`.
 */
export function socketDirectoryFor(clusterDir: string, port: number): string | null {
  if (!/^\/[\w./-]*$/.test(clusterDir)) return null;
  const socketPath = join(clusterDir, `.s.PGSQL.${port}`);
  return Buffer.byteLength(socketPath) <= SOCKET_PATH_MAX_BYTES ? clusterDir : null;
}
