import { Module } from '@nestjs/common';
import { OccurrencesModule } from '../occurrences/occurrences.module';
import { TargetsModule } from '../targets/targets.module';
import { RunExecutor } from './run-executor';
import { WorkerService } from './worker.service';

@Module({
  imports: [OccurrencesModule, TargetsModule],
  providers: [RunExecutor, WorkerService],
  exports: [WorkerService],
})
export class WorkerModule {}
