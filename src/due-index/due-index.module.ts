import { Module } from '@nestjs/common';
import { DueIndexService } from './due-index.service';
import { ShardLeasesService } from './shard-leases.service';

@Module({
  providers: [DueIndexService, ShardLeasesService],
  exports: [DueIndexService, ShardLeasesService],
})
export class DueIndexModule {}
