export type { components, operations, paths } from './api-contract.generated';
export {
  createDuelineClient,
  describeProblem,
  isProblem,
  type DuelineClient,
  type DuelineClientOptions,
  type Problem,
  type Schemas,
} from './dueline-client';
