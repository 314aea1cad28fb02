import { Module } from '@nestjs/common';
import { EventsModule } from '../events';
import { HandoffModule } from '../handoff';
import { OverlapModule } from '../overlap';
import { AdmissionRepository } from './admission.repository';
import { AdmissionService } from './admission.service';

/** Admission: tenant permits, rate tokens and the overlap policy, decided at claim. */
@Module({
  imports: [EventsModule, HandoffModule, OverlapModule],
  providers: [AdmissionRepository, AdmissionService],
  exports: [AdmissionService],
})
export class AdmissionModule {}
