import { Module } from '@nestjs/common';
import { OverlapRepository } from './overlap.repository';
import { OverlapService } from './overlap.service';

@Module({
  providers: [OverlapRepository, OverlapService],
  exports: [OverlapService],
})
export class OverlapModule {}
