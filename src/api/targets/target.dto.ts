import { applyDecorators } from '@nestjs/common';
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
  targetAuthProblems,
  type TargetAuth,
  type TargetAuthView,
  MAX_HEADER_VALUE_LENGTH,
  MAX_TARGET_HEADERS,
  targetHeaderProblems,
  Target,
  TARGET_KINDS,
  TARGET_LIMITS,
  TARGET_METHODS,
  TARGET_STATUSES,
  type TargetKind,
  type TargetMethod,
  type TargetStatus,
} from '../../targets';
import { MAX_TARGET_URL_LENGTH, standardSecretProblem } from '../../delivery';
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

/** The same structural rules as the targets service; every problem in one message. */
function IsTargetAuth(): PropertyDecorator {
  return (object, propertyName) =>
    registerDecorator({
      name: 'isTargetAuth',
      target: object.constructor,
      propertyName: String(propertyName),
      validator: {
        validate: (value: unknown) => value === null || targetAuthProblems(value).length === 0,
        defaultMessage: (args) =>
          targetAuthProblems(args?.value)
            .map((p) => p.message)
            .join('; '),
      },
    });
}

const AUTH_DESCRIPTION =
  'Write-only: how dueline authenticates to the target (reads show the type and the fields ' +
  'that are not secrets). `bearer` {token}: Authorization: Bearer; `basic` {username, ' +
  'password}; `oauth2_client_credentials` {tokenUrl, clientId, clientSecret, scope?, ' +
  'audience?}: a token from the endpoint (https unless its host is in TARGET_ALLOWED_HOSTS), ' +
  'cached until shortly before it expires and fetched again once on a 401; `oidc` ' +
  '{audience?}: a short-lived JWT signed by dueline (aud = the target URL unless given; keys ' +
  'at /.well-known/jwks.json). null removes it.';
const AUTH_SCHEMA = {
  type: 'object',
  additionalProperties: true,
  example: {
    type: 'oauth2_client_credentials',
    tokenUrl: 'https://auth.example.com/oauth/token',
    clientId: 'dueline',
    clientSecret: 'client-secret-value',
    scope: 'jobs:run',
  },
} as const;

/** A signing secret in the Standard Webhooks form; the message never repeats the value. */
function IsSigningSecret(): PropertyDecorator {
  return (object, propertyName) =>
    registerDecorator({
      name: 'isSigningSecret',
      target: object.constructor,
      propertyName: String(propertyName),
      validator: {
        validate: (value: unknown) =>
          value === null || (typeof value === 'string' && standardSecretProblem(value) === null),
        defaultMessage: (args) =>
          `${args?.property} ${
            typeof args?.value === 'string'
              ? standardSecretProblem(args.value)
              : 'must be a string in the Standard Webhooks form ("whsec_" + base64)'
          }`,
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
  'Write-only HMAC-SHA256 key in the Standard Webhooks form: "whsec_" followed by base64 of ' +
  '24 to 64 random bytes. Requests then carry webhook-id, webhook-timestamp and ' +
  'webhook-signature (verify them with any Standard Webhooks library), and X-Dueline-Timestamp ' +
  'with X-Dueline-Signature (hex HMAC over `timestamp.body`, keyed with the whole secret text). ' +
  'Never returned; reads show hasSigningSecret. To change it without downtime use ' +
  'POST /targets/{id}/secrets/rotate.';
const FLOW_CONCURRENCY_DESCRIPTION =
  'At most this many runs of this target at once (RUNNING or on their way to a worker), across ' +
  'all the schedules that call it; the others wait QUEUED throttled_target. null or absent: no cap.';
const FLOW_RATE_DESCRIPTION =
  'At most this many runs of this target start per second, across all its schedules (a token ' +
  'bucket shared by every replica); the others wait QUEUED throttled_target. null or absent: no cap.';

/** A per-target flow limit (maxConcurrency, ratePerSecond): optional, null removes it. */
const FlowLimit = (example: number, description: string) =>
  applyDecorators(
    ApiPropertyOptional({
      type: Number,
      nullable: true,
      minimum: L.minFlowLimit,
      maximum: L.maxFlowLimit,
      example,
      description,
    }),
    IsOptional(),
    IsInt(),
    Min(L.minFlowLimit),
    Max(L.maxFlowLimit),
  );
const SECRET_EXAMPLE = 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw';

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
    example: SECRET_EXAMPLE,
    description: SECRET_DESCRIPTION,
  })
  @IsOptional()
  @IsSigningSecret()
  signingSecret?: string | null;

  @ApiPropertyOptional({ ...AUTH_SCHEMA, nullable: true, description: AUTH_DESCRIPTION })
  @IsOptional()
  @IsTargetAuth()
  auth?: TargetAuth | null;
  @FlowLimit(5, FLOW_CONCURRENCY_DESCRIPTION)
  maxConcurrency?: number | null;

  @FlowLimit(10, FLOW_RATE_DESCRIPTION)
  ratePerSecond?: number | null;
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
    example: SECRET_EXAMPLE,
    description: `${SECRET_DESCRIPTION} Replaces the secret at once (ending any rotation); null removes the secrets.`,
  })
  @IsOptional()
  @IsSigningSecret()
  signingSecret?: string | null;

  @ApiPropertyOptional({
    ...AUTH_SCHEMA,
    nullable: true,
    description: `${AUTH_DESCRIPTION} Replaces the whole block.`,
  })
  @IsOptional()
  @IsTargetAuth()
  auth?: TargetAuth | null;

  @FlowLimit(5, FLOW_CONCURRENCY_DESCRIPTION)
  maxConcurrency?: number | null;

  @FlowLimit(10, FLOW_RATE_DESCRIPTION)
  ratePerSecond?: number | null;

  @ApiPropertyOptional({
    enum: TARGET_STATUSES,
    description:
      '`active` re-enables a disabled target (its runs start again; a backoff it asked for is ' +
      'forgotten); `disabled` stops it by request (its runs end FAILED target_gone).',
  })
  @Absentable()
  @IsIn(TARGET_STATUSES)
  status?: TargetStatus;
}

export class RotateSecretDto {
  @ApiPropertyOptional({
    writeOnly: true,
    example: SECRET_EXAMPLE,
    description:
      'The new secret, in the Standard Webhooks form. Absent: dueline generates one and returns ' +
      'it once in this answer.',
  })
  @Absentable()
  @IsSigningSecret()
  signingSecret?: string;

  @ApiPropertyOptional({
    minimum: 0,
    maximum: L.maxSecretOverlapSeconds,
    default: L.defaultSecretOverlapSeconds,
    description:
      'How long the secret being replaced keeps signing beside the new one (each call then ' +
      'carries both signatures), so receivers can switch at any time within it; 0 drops it now.',
  })
  @Absentable()
  @IsInt()
  @Min(0)
  @Max(L.maxSecretOverlapSeconds)
  overlapSeconds?: number;
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

  @ApiProperty({
    format: 'date-time',
    nullable: true,
    type: String,
    description: 'Until when the secret the last rotation replaced keeps signing; null if none',
  })
  previousSecretExpiresAt: string | null;

  @ApiProperty({
    type: 'object',
    nullable: true,
    additionalProperties: true,
    example: {
      type: 'oauth2_client_credentials',
      tokenUrl: 'https://auth.example.com/oauth/token',
      clientId: 'dueline',
      scope: 'jobs:run',
      audience: null,
    },
    description: 'How dueline authenticates to the target, without its secrets; null for none',
  })
  auth: TargetAuthView | null;

  @ApiProperty({
    type: Number,
    nullable: true,
    example: 5,
    description: FLOW_CONCURRENCY_DESCRIPTION,
  })
  maxConcurrency: number | null;

  @ApiProperty({ type: Number, nullable: true, example: 10, description: FLOW_RATE_DESCRIPTION })
  ratePerSecond: number | null;

  @ApiProperty({
    enum: TARGET_STATUSES,
    example: 'active',
    description:
      '`disabled` after it answered 410 Gone (or by request): its runs end FAILED target_gone ' +
      'until PATCH sets it `active` again',
  })
  status: TargetStatus;

  @ApiProperty({
    type: String,
    nullable: true,
    example: null,
    description: 'Why it is disabled; null while active',
  })
  disabledReason: string | null;

  @ApiProperty({
    type: String,
    format: 'date-time',
    nullable: true,
    description:
      'It answered 429 or 503 with Retry-After: none of its runs starts before this instant ' +
      '(they wait QUEUED target_backoff, spending no attempt); null if it never asked',
  })
  backoffUntil: string | null;

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
      previousSecretExpiresAt: target.previousSecretExpiresAt?.toISOString() ?? null,
      auth: target.auth ? { ...target.auth } : null,
      maxConcurrency: target.maxConcurrency,
      ratePerSecond: target.ratePerSecond,
      status: target.status,
      disabledReason: target.disabledReason,
      backoffUntil: target.backoffUntil?.toISOString() ?? null,
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

export class RotatedSecretDto {
  @ApiProperty({ type: TargetDto })
  target: TargetDto;

  @ApiProperty({
    type: String,
    nullable: true,
    description: 'The secret dueline generated, shown this once; null when the caller gave one',
  })
  generatedSecret: string | null;
}
