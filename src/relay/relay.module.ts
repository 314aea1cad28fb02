import { Module } from '@nestjs/common';
import { OccurrencesModule } from '../occurrences/occurrences.module';
import { LeaseSweeper } from './lease-sweeper';
import { RelayService } from './relay.service';

@Module({
  imports: [OccurrencesModule],
  providers: [RelayService, LeaseSweeper],
  exports: [RelayService],
})
export class RelayModule {}
