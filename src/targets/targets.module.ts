import { Module } from '@nestjs/common';
import { TargetsRepository } from './targets.repository';
import { TargetsService } from './targets.service';

@Module({
  providers: [TargetsRepository, TargetsService],
  exports: [TargetsService],
})
export class TargetsModule {}
