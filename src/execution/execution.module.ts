import { Module } from '@nestjs/common';
import { AdmissionModule } from '../admission';
import { AttemptsModule } from '../attempts';
import { EventsModule } from '../events';
import { OccurrencesModule } from '../occurrences';
import { OverlapModule } from '../overlap';
import { TargetsModule } from '../targets';
import { ExecutionRepository } from './execution.repository';
import { ExecutionService } from './execution.service';

/** Execution: a claimed run's heartbeats, fenced completion and lease expiry. */
@Module({
  imports: [
    AdmissionModule,
    AttemptsModule,
    EventsModule,
    OccurrencesModule,
    OverlapModule,
    TargetsModule,
  ],
  providers: [ExecutionRepository, ExecutionService],
  exports: [ExecutionService],
})
export class ExecutionModule {}
