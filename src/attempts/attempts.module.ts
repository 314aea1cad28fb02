import { Module } from '@nestjs/common';
import { AttemptsRepository } from './attempts.repository';
import { AttemptsService } from './attempts.service';

@Module({
  providers: [AttemptsRepository, AttemptsService],
  exports: [AttemptsService],
})
export class AttemptsModule {}
