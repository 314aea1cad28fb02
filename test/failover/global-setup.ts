import { execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join, resolve } from 'node:path';

/**
 * The failover project's own setup: pg_auto_failover installed (through the project's script,
 * with apt-get when missing) and the service built (the replicas run dist/src/main.js; `npm
 * test` builds first, a lone `npx jest --selectProjects failover` may not have).
 */
export default function globalSetup(): void {
  const root = resolve(__dirname, '../..');
  execFileSync('bash', [join(__dirname, 'ensure-pg-auto-failover.sh')], { stdio: 'inherit' });
  if (!existsSync(join(root, 'dist/src/main.js'))) {
    execFileSync('npx', ['nest', 'build'], { cwd: root, stdio: 'inherit' });
  }
}
