import { Module } from '@nestjs/common';
import { CalendarsRepository } from './calendars.repository';
import { CalendarsService } from './calendars.service';

/** Calendars (record module): a tenant's named, unchanging lists of excluded local dates. */
@Module({
  providers: [CalendarsRepository, CalendarsService],
  exports: [CalendarsService],
})
export class CalendarsModule {}
