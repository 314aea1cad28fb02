import { Module } from '@nestjs/common';
import { TenantsModule } from '../tenants/tenants.module';
import { AttemptsModule } from '../attempts/attempts.module';
import { ExecutionMetrics } from './execution-metrics';
import { ExecutionSettings } from './execution-settings';
import { OccurrenceLedger } from './occurrence-ledger';
import { OccurrencesRepository } from './occurrences.repository';
import { OccurrencesService } from './occurrences.service';
import { RunExecutionService } from './run-execution.service';

/**
 * The run ledger: creating runs (OccurrenceLedger, for the poller and triggers), their history
 * and cancellation (OccurrencesService) and their execution (RunExecutionService). It reads the
 * schedule columns it needs with SQL joins, so it never depends on the schedules module (which
 * depends on it to cancel a cancelled schedule's runs).
 */
@Module({
  imports: [AttemptsModule, TenantsModule],
  providers: [
    OccurrenceLedger,
    OccurrencesRepository,
    OccurrencesService,
    RunExecutionService,
    ExecutionSettings,
    ExecutionMetrics,
  ],
  exports: [
    OccurrenceLedger,
    OccurrencesService,
    RunExecutionService,
    ExecutionSettings,
    ExecutionMetrics,
  ],
})
export class OccurrencesModule {}
