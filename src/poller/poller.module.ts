import { Module } from '@nestjs/common';
import { PollerService } from './poller.service';

@Module({
  providers: [PollerService],
  exports: [PollerService],
})
export class PollerModule {}
