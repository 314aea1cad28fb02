export {
  loadConfig,
  LOG_LEVELS,
  ROLE_NAMES,
  type AdmissionConfig,
  type AppConfig,
  type DatabaseConfig,
  type Env,
  type ExecutionConfig,
  type LogLevel,
  type ManagementConfig,
  type PollerConfig,
  type QueueConfig,
  type RelayConfig,
  type RoleName,
  type WorkerConfig,
} from './app-config';
export { APP_CONFIG, ConfigModule } from './config.module';
export { InvalidConfigError } from './invalid-config.error';
