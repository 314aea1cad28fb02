import { Module } from '@nestjs/common';
import { EventsModule } from '../events';
import { TargetsRepository } from './targets.repository';
import { TargetsService } from './targets.service';

@Module({
  imports: [EventsModule],
  providers: [TargetsRepository, TargetsService],
  exports: [TargetsService],
})
export class TargetsModule {}
