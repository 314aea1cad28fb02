export {
  TARGET_KINDS,
  TARGET_LIMITS,
  TARGET_METHODS,
  TARGET_STATUSES,
  DispatchTargets,
  type DispatchTarget,
  type RotatedSecret,
  type SecretRotation,
  type Target,
  type TargetInput,
  type TargetKind,
  type TargetMethod,
  type TargetPage,
  type TargetPatch,
  type TargetRef,
  type TargetStatus,
} from './target';
export { TargetEntity } from './target.entity';
export {
  MAX_HEADER_VALUE_LENGTH,
  MAX_TARGET_HEADERS,
  targetHeaderProblems,
} from './target-headers';
export { TargetsModule } from './targets.module';
export { TargetsService } from './targets.service';
export {
  authView,
  TARGET_AUTH_TYPES,
  targetAuthProblems,
  type TargetAuth,
  type TargetAuthType,
  type TargetAuthView,
} from './target-auth';
