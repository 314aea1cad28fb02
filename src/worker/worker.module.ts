import { Module } from '@nestjs/common';
import { AdmissionModule } from '../admission';
import { ExecutionModule } from '../execution';
import { OccurrencesModule } from '../occurrences';
import { SigningKeysModule } from '../signing-keys';
import { TargetsModule } from '../targets';
import { RunExecutor } from './run-executor';
import { TargetCredentials } from './target-credentials';
import { WorkerService } from './worker.service';

/**
 * The worker role: fetches run jobs, claims their runs (admission), calls the targets (delivery)
 * under a kept lease, and reports each outcome under its fence (execution).
 */
@Module({
  imports: [AdmissionModule, ExecutionModule, TargetsModule, SigningKeysModule, OccurrencesModule],
  providers: [RunExecutor, WorkerService, TargetCredentials],
  exports: [WorkerService],
})
export class WorkerModule {}
