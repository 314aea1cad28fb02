import { Module } from '@nestjs/common';
import { ExecutionModule } from '../execution';
import { SchedulesModule } from '../schedules';
import { LeaseSweeper } from './lease-sweeper';
import { OutboxRepository } from './outbox.repository';
import { RelayService } from './relay.service';

/** The relay role: the outbox repair, the lease sweeper, Idempotency-Key pruning. */
@Module({
  imports: [ExecutionModule, SchedulesModule],
  providers: [RelayService, LeaseSweeper, OutboxRepository],
  exports: [RelayService],
})
export class RelayModule {}
