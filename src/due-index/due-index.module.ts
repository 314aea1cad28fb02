import { Module } from '@nestjs/common';
import { DueIndexService } from './due-index.service';

@Module({
  providers: [DueIndexService],
  exports: [DueIndexService],
})
export class DueIndexModule {}
