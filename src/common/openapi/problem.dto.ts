import { applyDecorators } from '@nestjs/common';
import { ApiProperty, ApiPropertyOptional, ApiResponse } from '@nestjs/swagger';
import { PROBLEM_CONTENT_TYPE } from '../problem/problem';

export class FieldErrorDto {
  @ApiProperty({ example: 'name' })
  field: string;

  @ApiProperty({ example: 'name must be shorter than or equal to 200 characters' })
  message: string;
}

export class ProblemDto {
  @ApiProperty({ example: 'https://dueline.dev/problems/validation' })
  type: string;

  @ApiProperty({ example: 'Invalid request' })
  title: string;

  @ApiProperty({ example: 400 })
  status: number;

  @ApiProperty({ example: 'the request is invalid' })
  detail: string;

  @ApiPropertyOptional({ type: [FieldErrorDto] })
  errors?: FieldErrorDto[];
}

const DESCRIPTIONS: Record<number, string> = {
  400: 'Invalid input (unknown fields, wrong types, malformed JSON)',
  401: 'Missing or invalid credentials',
  403: 'Quota exceeded',
  404: "Not found (also for another tenant's ids)",
  409: 'Conflict (stale revision or state)',
  413: 'Body too large',
  422: 'Idempotency-Key reused with a different body',
  428: 'If-Match required',
  429: 'Rate limited (see Retry-After)',
  503: 'Not ready: the database or the queue is unreachable',
};

/** Documents error answers as RFC 9457 problem documents. */
export function ApiProblems(...statuses: number[]): MethodDecorator & ClassDecorator {
  return applyDecorators(
    ...statuses.map((status) =>
      ApiResponse({
        status,
        description: DESCRIPTIONS[status] ?? 'Error',
        content: {
          [PROBLEM_CONTENT_TYPE]: { schema: { $ref: '#/components/schemas/ProblemDto' } },
        },
      }),
    ),
  );
}

/** Response headers as OpenAPI wants them (each with its schema). */
export const RESPONSE_HEADERS = {
  Location: { description: 'the created resource', schema: { type: 'string' } },
  ETag: {
    description: 'the revision, quoted; send it back as If-Match',
    schema: { type: 'string', example: '"1"' },
  },
} as const;
