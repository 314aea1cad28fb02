import { Module } from '@nestjs/common';
import { AttemptsModule } from '../attempts';
import { EventsModule } from '../events';
import { OverlapModule } from '../overlap';
import { OccurrencesRepository } from './occurrences.repository';
import { OccurrencesService } from './occurrences.service';

/**
 * The run ledger (record module): occurrences created once, their history, cancellation. It
 * never depends on the schedules module (which depends on it to cancel a cancelled schedule's
 * runs and to record manual runs).
 */
@Module({
  imports: [AttemptsModule, EventsModule, OverlapModule],
  providers: [OccurrencesRepository, OccurrencesService],
  exports: [OccurrencesService],
})
export class OccurrencesModule {}
