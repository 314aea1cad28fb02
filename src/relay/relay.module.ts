import { Module } from '@nestjs/common';
import { AdmissionModule } from '../admission';
import { BackfillsModule } from '../backfills';
import { BulkOperationsModule } from '../bulk-operations';
import { ExecutionModule } from '../execution';
import { HistoryModule } from '../history';
import { SchedulesModule } from '../schedules';
import { SigningKeysModule } from '../signing-keys';
import { TargetsModule } from '../targets';
import { AdmissionLoop } from './admission-loop';
import { AutoPauseLoop } from './auto-pause-loop';
import { BackfillLoop } from './backfill-loop';
import { HistoryMaintenanceLoop } from './history-maintenance-loop';
import { LeaseSweeper } from './lease-sweeper';
import { OutboxRepository } from './outbox.repository';
import { RelayService } from './relay.service';

/**
 * The relay role: the admitter, the outbox repair, the lease sweeper, key pruning, and resuming
 * bulk operations whose processor died, moving backfills on, auto-pausing failing schedules,
 * and the history partitions (created ahead, dropped after the retention).
 */
@Module({
  imports: [
    AdmissionModule,
    BackfillsModule,
    BulkOperationsModule,
    ExecutionModule,
    HistoryModule,
    SchedulesModule,
    TargetsModule,
    SigningKeysModule,
  ],
  providers: [
    RelayService,
    LeaseSweeper,
    AdmissionLoop,
    BackfillLoop,
    AutoPauseLoop,
    HistoryMaintenanceLoop,
    OutboxRepository,
  ],
  exports: [RelayService],
})
export class RelayModule {}
