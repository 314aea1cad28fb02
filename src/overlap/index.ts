export {
  allowsConcurrentRuns,
  claimBlockedByOverlap,
  CONCURRENT_POLICIES,
  OVERLAP_POLICIES,
  planNewRun,
  type ActiveRuns,
  type OverlapPolicy,
} from './overlap-policy';
export { OverlapModule } from './overlap.module';
export { OverlapService } from './overlap.service';
