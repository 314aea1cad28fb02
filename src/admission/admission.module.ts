import { Module } from '@nestjs/common';
import { OverlapModule } from '../overlap';
import { AdmissionRepository } from './admission.repository';
import { AdmissionService } from './admission.service';

/** Admission: tenant permits, rate tokens and the overlap policy, decided at claim. */
@Module({
  imports: [OverlapModule],
  providers: [AdmissionRepository, AdmissionService],
  exports: [AdmissionService],
})
export class AdmissionModule {}
