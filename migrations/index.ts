import { Init1796012728174 } from './1796012728174-Init';
import { Targets1796020000000 } from './1796020000000-Targets';
import { Schedules1796030000000 } from './1796030000000-Schedules';
import { Dispatch1796040000000 } from './1796040000000-Dispatch';
import { DispatchBudget1796050000000 } from './1796050000000-DispatchBudget';
import { RunReasons1796060000000 } from './1796060000000-RunReasons';
import { ScheduleQuota1796070000000 } from './1796070000000-ScheduleQuota';
import { Admission1796080000000 } from './1796080000000-Admission';
import { FairShare1796090000000 } from './1796090000000-FairShare';
import { LoadProfile1796091000000 } from './1796091000000-LoadProfile';
import { FlexibleWindows1796092000000 } from './1796092000000-FlexibleWindows';
import { WaitingDeadlineIndex1796093000000 } from './1796093000000-WaitingDeadlineIndex';
import { SigningSecretRotation1796200000000 } from './1796200000000-SigningSecretRotation';
import { EncryptSecretsAtRest1796210000000 } from './1796210000000-EncryptSecretsAtRest';
import { AttemptResponses1796220000000 } from './1796220000000-AttemptResponses';
import { TargetAuth1796230000000 } from './1796230000000-TargetAuth';
import { RunTraces1796240000000 } from './1796240000000-RunTraces';
import { EventSubscriptions1796310000000 } from './1796310000000-EventSubscriptions';
import { TargetFlowControl1796500000000 } from './1796500000000-TargetFlowControl';
import { PartitionedHistory1796600000000 } from './1796600000000-PartitionedHistory';
import type { SecretKeyring } from '../src/secrets';
import { RicherSchedules1796300000000 } from './1796300000000-RicherSchedules';
import { ScheduleRevisions1796300000001 } from './1796300000001-ScheduleRevisions';
import { RunSearchAndBulk1796300000002 } from './1796300000002-RunSearchAndBulk';
import { Backfills1796300000003 } from './1796300000003-Backfills';
import { AutoPause1796300000004 } from './1796300000004-AutoPause';
import { HistorySummaries1796610000000 } from './1796610000000-HistorySummaries';
import { RunsWithoutParentKeys1796620000000 } from './1796620000000-RunsWithoutParentKeys';
import { StatsProofRunIndexes1796630000000 } from './1796630000000-StatsProofRunIndexes';
import { OneTenantRunIndex1796640000000 } from './1796640000000-OneTenantRunIndex';
import { DueIndexByInstant1796650000000 } from './1796650000000-DueIndexByInstant';
import { CreationRevisionOnSchedule1796660000000 } from './1796660000000-CreationRevisionOnSchedule';
import { DueIndexKeyedBySchedule1796670000000 } from './1796670000000-DueIndexKeyedBySchedule';
import { OneHoldingIndex1796680000000 } from './1796680000000-OneHoldingIndex';
import { HistoryByIdentity1796690000000 } from './1796690000000-HistoryByIdentity';
import { AttemptsWithoutRunKey1796700000000 } from './1796700000000-AttemptsWithoutRunKey';

/** Every migration, oldest first. Each is reviewed SQL; TypeORM only runs them in order. */
export const MIGRATIONS = [
  Init1796012728174,
  Targets1796020000000,
  Schedules1796030000000,
  Dispatch1796040000000,
  DispatchBudget1796050000000,
  RunReasons1796060000000,
  ScheduleQuota1796070000000,
  Admission1796080000000,
  FairShare1796090000000,
  LoadProfile1796091000000,
  FlexibleWindows1796092000000,
  WaitingDeadlineIndex1796093000000,
  SigningSecretRotation1796200000000,
  EncryptSecretsAtRest1796210000000,
  AttemptResponses1796220000000,
  TargetAuth1796230000000,
  RunTraces1796240000000,
  RicherSchedules1796300000000,
  ScheduleRevisions1796300000001,
  RunSearchAndBulk1796300000002,
  Backfills1796300000003,
  AutoPause1796300000004,
  EventSubscriptions1796310000000,
  TargetFlowControl1796500000000,
  PartitionedHistory1796600000000,
  HistorySummaries1796610000000,
  RunsWithoutParentKeys1796620000000,
  StatsProofRunIndexes1796630000000,
  OneTenantRunIndex1796640000000,
  DueIndexByInstant1796650000000,
  CreationRevisionOnSchedule1796660000000,
  DueIndexKeyedBySchedule1796670000000,
  OneHoldingIndex1796680000000,
  HistoryByIdentity1796690000000,
  AttemptsWithoutRunKey1796700000000,
];

/** MIGRATIONS with the keyring that the data migrations seal secrets under. */
// eslint-disable-next-line @typescript-eslint/no-unsafe-function-type -- TypeORM takes migration classes
export function migrationsWith(keyring: SecretKeyring | null): Function[] {
  if (!keyring) return MIGRATIONS;
  return MIGRATIONS.map((migration) =>
    migration === EncryptSecretsAtRest1796210000000
      ? EncryptSecretsAtRest1796210000000.withKeyring(keyring)
      : migration,
  );
}
