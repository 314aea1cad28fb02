import { Module } from '@nestjs/common';
import { AdmissionModule } from '../admission';
import { ExecutionModule } from '../execution';
import { SchedulesModule } from '../schedules';
import { SigningKeysModule } from '../signing-keys';
import { TargetsModule } from '../targets';
import { AdmissionLoop } from './admission-loop';
import { LeaseSweeper } from './lease-sweeper';
import { OutboxRepository } from './outbox.repository';
import { RelayService } from './relay.service';

/** The relay role: the admitter, the outbox repair, the lease sweeper, key pruning. */
@Module({
  imports: [AdmissionModule, ExecutionModule, SchedulesModule, TargetsModule, SigningKeysModule],
  providers: [RelayService, LeaseSweeper, AdmissionLoop, OutboxRepository],
  exports: [RelayService],
})
export class RelayModule {}
