export {
  decideAdmission,
  type AdmissionCandidate,
  type AdmissionDecision,
  type TargetBudget,
  type TenantBudget,
} from './admission-plan';
export { AdmissionModule } from './admission.module';
export { type TenantAdmission } from './admission.repository';
export { AdmissionService, type AdmitterRound, type NewRunToAdmit } from './admission.service';
export type { Claim, ClaimOptions, ClaimRefusal, ClaimRequest, ClaimResult } from './claim';
export { claimRefusal, type ClaimDiagnosis } from './claim-refusal';
export { DispatchBudgetEntity } from './dispatch-budget.entity';
export { TargetDispatchBudgetEntity } from './target-dispatch-budget.entity';
