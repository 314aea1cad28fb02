import { Module } from '@nestjs/common';
import { AdmissionModule } from '../admission';
import { ExecutionModule } from '../execution';
import { TargetsModule } from '../targets';
import { RunExecutor } from './run-executor';
import { WorkerService } from './worker.service';

/**
 * The worker role: fetches run jobs, claims their runs (admission), calls the targets (delivery)
 * under a kept lease, and reports each outcome under its fence (execution).
 */
@Module({
  imports: [AdmissionModule, ExecutionModule, TargetsModule],
  providers: [RunExecutor, WorkerService],
  exports: [WorkerService],
})
export class WorkerModule {}
