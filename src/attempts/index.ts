export { AttemptEntity } from './attempt.entity';
export {
  MAX_ATTEMPT_ERROR_LENGTH,
  type Attempt,
  type AttemptEnd,
  type AttemptResponse,
} from './attempt';
export { AttemptsModule } from './attempts.module';
export type { FencedAttemptEnd } from './attempts.repository';
export { AttemptsService } from './attempts.service';
