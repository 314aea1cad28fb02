import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import {
  IsBoolean,
  IsIn,
  IsInt,
  IsOptional,
  IsString,
  Length,
  Max,
  MaxLength,
  Min,
  registerDecorator,
} from 'class-validator';
import { NoControlCharacters } from '../../common';
import {
  MAX_HEADER_VALUE_LENGTH,
  MAX_TARGET_HEADERS,
  targetHeaderProblems,
  Target,
  TARGET_KINDS,
  TARGET_LIMITS,
  TARGET_METHODS,
  type TargetKind,
  type TargetMethod,
} from '../../targets';
import { MAX_TARGET_URL_LENGTH } from '../../delivery';
import { Absentable, PageQueryDto } from '../common/page-query.dto';

const L = TARGET_LIMITS;

/** Same rules as the targets service, reported as one field error with every problem. */
function IsTargetHeaders(): PropertyDecorator {
  return (object, propertyName) =>
    registerDecorator({
      name: 'isTargetHeaders',
      target: object.constructor,
      propertyName: String(propertyName),
      validator: {
        validate: (value: unknown) => targetHeaderProblems(value).length === 0,
        defaultMessage: (args) => targetHeaderProblems(args?.value).join('; '),
      },
    });
}

const HEADERS_DESCRIPTION =
  `Static headers sent on every call: at most ${MAX_TARGET_HEADERS}, names are HTTP tokens, ` +
  `values printable ASCII of at most ${MAX_HEADER_VALUE_LENGTH} characters. They are shown on ` +
  'every read, so they must not be credentials: Authorization, Cookie and Proxy-Authorization ' +
  'are refused (use signingSecret), as are Host, Content-Length, Content-Type, Connection, ' +
  'Transfer-Encoding and other framing headers, Idempotency-Key and X-Dueline-*.';
const HEADERS_EXAMPLE = { 'X-Team': 'billing' };

const URL_DESCRIPTION =
  'http or https, no credentials. Loopback, private, link-local and cloud metadata addresses ' +
  '(and internal names such as localhost or *.internal) are refused unless the operator lists ' +
  'them in TARGET_ALLOWED_HOSTS. Stored and returned in normalised form.';

const SECRET_DESCRIPTION =
  'Write-only HMAC-SHA256 key: requests then carry X-Dueline-Timestamp and X-Dueline-Signature ' +
  '(over `timestamp.body`). Never returned; reads show hasSigningSecret.';

export class CreateTargetDto {
  @ApiProperty({ example: 'billing-webhook', minLength: 1, maxLength: L.nameMaxLength })
  @IsString()
  @Length(1, L.nameMaxLength)
  @NoControlCharacters()
  name: string;

  @ApiPropertyOptional({ enum: TARGET_KINDS, default: 'http' })
  @Absentable()
  @IsIn(TARGET_KINDS)
  kind?: TargetKind;

  @ApiProperty({
    example: 'https://billing.example.com/hooks/nightly',
    maxLength: MAX_TARGET_URL_LENGTH,
    description: URL_DESCRIPTION,
  })
  @IsString()
  @MaxLength(MAX_TARGET_URL_LENGTH)
  // The URL parser silently drops tabs and newlines, so the URL checked would not be the URL sent.
  @NoControlCharacters()
  url: string;

  @ApiPropertyOptional({ enum: TARGET_METHODS, default: 'POST' })
  @Absentable()
  @IsIn(TARGET_METHODS)
  method?: TargetMethod;

  @ApiPropertyOptional({
    type: 'object',
    additionalProperties: { type: 'string' },
    example: HEADERS_EXAMPLE,
    description: HEADERS_DESCRIPTION,
  })
  @Absentable()
  @IsTargetHeaders()
  headers?: Record<string, string>;

  @ApiPropertyOptional({
    minimum: L.minTimeoutMs,
    maximum: L.maxTimeoutMs,
    default: L.defaultTimeoutMs,
    example: 10000,
  })
  @Absentable()
  @IsInt()
  @Min(L.minTimeoutMs)
  @Max(L.maxTimeoutMs)
  timeoutMs?: number;

  @ApiPropertyOptional({
    default: false,
    description:
      'The target deduplicates on Idempotency-Key (the run id), so an attempt whose outcome is ' +
      'unknown may be retried; otherwise such a run ends UNKNOWN.',
  })
  @Absentable()
  @IsBoolean()
  deduplicates?: boolean;

  @ApiPropertyOptional({
    type: String,
    minLength: L.minSecretLength,
    maxLength: L.maxSecretLength,
    writeOnly: true,
    nullable: true,
    example: 'whsec_3b1f0c9e2d7a4f58',
    description: SECRET_DESCRIPTION,
  })
  @IsOptional()
  @IsString()
  @Length(L.minSecretLength, L.maxSecretLength)
  @NoControlCharacters()
  signingSecret?: string | null;
}

/** Every field optional; `signingSecret: null` removes the secret; `headers` replaces them all. */
export class UpdateTargetDto {
  @ApiPropertyOptional({ example: 'billing-webhook', minLength: 1, maxLength: L.nameMaxLength })
  @Absentable()
  @IsString()
  @Length(1, L.nameMaxLength)
  @NoControlCharacters()
  name?: string;

  @ApiPropertyOptional({ enum: TARGET_KINDS })
  @Absentable()
  @IsIn(TARGET_KINDS)
  kind?: TargetKind;

  @ApiPropertyOptional({
    example: 'https://billing.example.com/hooks/nightly',
    maxLength: MAX_TARGET_URL_LENGTH,
    description: URL_DESCRIPTION,
  })
  @Absentable()
  @IsString()
  @MaxLength(MAX_TARGET_URL_LENGTH)
  @NoControlCharacters()
  url?: string;

  @ApiPropertyOptional({ enum: TARGET_METHODS })
  @Absentable()
  @IsIn(TARGET_METHODS)
  method?: TargetMethod;

  @ApiPropertyOptional({
    type: 'object',
    additionalProperties: { type: 'string' },
    example: HEADERS_EXAMPLE,
    description: `${HEADERS_DESCRIPTION} Replaces all registered headers; {} removes them.`,
  })
  @Absentable()
  @IsTargetHeaders()
  headers?: Record<string, string>;

  @ApiPropertyOptional({ minimum: L.minTimeoutMs, maximum: L.maxTimeoutMs, example: 10000 })
  @Absentable()
  @IsInt()
  @Min(L.minTimeoutMs)
  @Max(L.maxTimeoutMs)
  timeoutMs?: number;

  @ApiPropertyOptional()
  @Absentable()
  @IsBoolean()
  deduplicates?: boolean;

  @ApiPropertyOptional({
    type: String,
    minLength: L.minSecretLength,
    maxLength: L.maxSecretLength,
    writeOnly: true,
    nullable: true,
    example: 'whsec_3b1f0c9e2d7a4f58',
    description: `${SECRET_DESCRIPTION} null removes the secret.`,
  })
  @IsOptional()
  @IsString()
  @Length(L.minSecretLength, L.maxSecretLength)
  @NoControlCharacters()
  signingSecret?: string | null;
}

export class ListTargetsQueryDto extends PageQueryDto {}

export class TargetDto {
  @ApiProperty({ format: 'uuid' })
  id: string;

  @ApiProperty({ example: 'billing-webhook' })
  name: string;

  @ApiProperty({ enum: TARGET_KINDS, example: 'http' })
  kind: TargetKind;

  @ApiProperty({ example: 'https://billing.example.com/hooks/nightly' })
  url: string;

  @ApiProperty({ enum: TARGET_METHODS, example: 'POST' })
  method: TargetMethod;

  @ApiProperty({
    type: 'object',
    additionalProperties: { type: 'string' },
    example: HEADERS_EXAMPLE,
  })
  headers: Record<string, string>;

  @ApiProperty({ example: 10000 })
  timeoutMs: number;

  @ApiProperty({ example: false })
  deduplicates: boolean;

  @ApiProperty({
    example: true,
    description: 'Whether a signing secret is set (it is never shown)',
  })
  hasSigningSecret: boolean;

  @ApiProperty({ format: 'date-time' })
  createdAt: string;

  @ApiProperty({ format: 'date-time' })
  updatedAt: string;

  /** Field by field, so nothing the domain adds later can reach the wire by accident. */
  static from(target: Target): TargetDto {
    return {
      id: target.id,
      name: target.name,
      kind: target.kind,
      url: target.url,
      method: target.method,
      headers: { ...target.headers },
      timeoutMs: target.timeoutMs,
      deduplicates: target.deduplicates,
      hasSigningSecret: target.hasSigningSecret,
      createdAt: target.createdAt.toISOString(),
      updatedAt: target.updatedAt.toISOString(),
    };
  }
}

export class TargetPageDto {
  @ApiProperty({ type: [TargetDto] })
  items: TargetDto[];

  @ApiProperty({
    type: String,
    nullable: true,
    description: 'Pass as `cursor` for the next page; null on the last page',
    example: 'MjAyNy0wMS0wMVQwOTowMDowMC4xMjM0NTZafDAxOTNmN2Ex',
  })
  nextCursor: string | null;
}
