import {
  ArgumentMetadata,
  ValidationError as ClassValidatorError,
  ValidationPipe,
} from '@nestjs/common';
import { FieldError, ValidationError } from '../problem/domain-errors';

/**
 * Strict input: unknown fields are rejected, types are not coerced for bodies, and every field
 * problem is reported at once as `errors[]` in a 400 problem.
 */
export class StrictValidationPipe extends ValidationPipe {
  constructor() {
    super({
      whitelist: true,
      forbidNonWhitelisted: true,
      transform: true,
      validationError: { target: false, value: false },
      exceptionFactory: (errors) => new ValidationError('the request is invalid', flatten(errors)),
    });
  }

  override async transform(value: unknown, metadata: ArgumentMetadata): Promise<unknown> {
    if (metadata.type === 'body' && metadata.metatype && metadata.metatype !== Object) {
      if (value === null || typeof value !== 'object' || Array.isArray(value)) {
        throw new ValidationError('the request body must be a JSON object');
      }
    }
    return super.transform(value, metadata);
  }
}

function flatten(errors: ClassValidatorError[], prefix = ''): FieldError[] {
  return errors.flatMap((error) => {
    const field = prefix ? `${prefix}.${error.property}` : error.property;
    const own = Object.values(error.constraints ?? {}).map((message) => ({ field, message }));
    return [...own, ...flatten(error.children ?? [], field)];
  });
}
