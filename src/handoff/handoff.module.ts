import { Module } from '@nestjs/common';
import { RunHandoff } from './run-handoff';

/**
 * The handoff of dispatched runs from the poller to a worker of the same service (RunHandoff):
 * the poller asks it for a receiver, the worker role (in this process) and the worker pool (its
 * processes) register as receivers.
 */
@Module({
  providers: [RunHandoff],
  exports: [RunHandoff],
})
export class HandoffModule {}
