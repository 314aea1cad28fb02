export {
  startEmbeddedPostgres,
  type EmbeddedPostgresHandle,
  type EmbeddedPostgresOptions,
} from './embedded-postgres';
