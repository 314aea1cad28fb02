import { Module } from '@nestjs/common';
import { OccurrenceLedger } from './occurrence-ledger';

@Module({
  providers: [OccurrenceLedger],
  exports: [OccurrenceLedger],
})
export class OccurrencesModule {}
