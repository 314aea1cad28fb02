import { Module } from '@nestjs/common';
import { AdmissionModule } from '../admission';
import { EventsModule } from '../events';
import { ExecutionModule } from '../execution';
import { HandoffModule } from '../handoff';
import { OccurrencesModule } from '../occurrences';
import { SigningKeysModule } from '../signing-keys';
import { TargetsModule } from '../targets';
import { EventDeliverer } from './event-deliverer';
import { RunExecutor } from './run-executor';
import { TargetCredentials } from './target-credentials';
import { WorkerService } from './worker.service';

/**
 * The worker role: fetches run jobs, claims their runs (admission), calls the targets (delivery)
 * under a kept lease, and reports each outcome under its fence (execution); and, in a lane of
 * its own, delivers events to subscriptions (EventDeliverer).
 */
@Module({
  imports: [
    AdmissionModule,
    EventsModule,
    ExecutionModule,
    HandoffModule,
    TargetsModule,
    SigningKeysModule,
    OccurrencesModule,
  ],
  providers: [RunExecutor, WorkerService, TargetCredentials, EventDeliverer],
  exports: [WorkerService],
})
export class WorkerModule {}
