export {
  decideAdmission,
  type AdmissionCandidate,
  type AdmissionDecision,
  type TenantBudget,
} from './admission-plan';
export { AdmissionModule } from './admission.module';
export { type TenantAdmission } from './admission.repository';
export { AdmissionService, type NewRunToAdmit } from './admission.service';
export type { Claim, ClaimOptions, ClaimRefusal, ClaimRequest, ClaimResult } from './claim';
export { claimRefusal, type ClaimDiagnosis } from './claim-refusal';
export { DispatchBudgetEntity } from './dispatch-budget.entity';
