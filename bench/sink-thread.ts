import { parentPort } from 'node:worker_threads';
import { startSinkServer } from './sink-server';
import type { SinkMessage, SinkCommand } from './sink';

/**
 * The sink's own thread: its event loop does nothing but take requests, stamp them and pass the
 * receipts on, so nothing the bench does meanwhile on its main thread (reading /proc for the
 * resource meter, progress lines, reading the ledger) delays a stamp.
 */
async function main(): Promise<void> {
  const port = parentPort;
  if (!port) throw new Error('sink-thread runs as a worker thread of the bench');
  const post = (message: SinkMessage) => port.postMessage(message);
  const { server, port: listening } = await startSinkServer({
    receipt: (receipt) => post({ kind: 'receipt', receipt }),
    malformed: (receivedAt) => post({ kind: 'malformed', receivedAt }),
  });
  port.on('message', (command: SinkCommand) => {
    if (command.kind !== 'close') return;
    server.closeAllConnections();
    server.close(() => post({ kind: 'closed' }));
  });
  post({ kind: 'listening', port: listening });
}

void main();
