import { ApiProperty } from '@nestjs/swagger';
import { NotFoundError } from '../../common';
import { REVISION_CHANGES, type ScheduleRevision } from '../../schedules';

/** A field's JSON value before or after a change: any JSON, null when the field had none. */
const FIELD_VALUE = {
  oneOf: [
    { type: 'string' },
    { type: 'number' },
    { type: 'boolean' },
    { type: 'object' },
    { type: 'array', items: {} },
  ],
  description: 'the JSON value (null when the field had none)',
};

class FieldChangeDto {
  @ApiProperty({ example: 'cron' }) field: string;
  @ApiProperty({ ...FIELD_VALUE, example: '0 9 * * *' }) from: unknown;
  @ApiProperty({ ...FIELD_VALUE, example: '0 10 * * *' }) to: unknown;
}

export class RevisionDto {
  @ApiProperty({ example: 2 }) revision: number;
  @ApiProperty({ enum: REVISION_CHANGES }) change: string;
  @ApiProperty({
    type: String,
    nullable: true,
    example: '3f9a0c1b2d4e5f60',
    description: 'the public id of the API key that made the change; null: dueline made it',
  })
  changedByApiKeyId: string | null;
  @ApiProperty({ format: 'date-time' }) changedAt: string;
  @ApiProperty({ type: [FieldChangeDto] }) changes: FieldChangeDto[];
  @ApiProperty({
    type: 'object',
    additionalProperties: true,
    description: 'the definition and status this revision left (field names as on a schedule)',
  })
  definition: Record<string, unknown>;
  @ApiProperty({ type: String, nullable: true, description: 'why dueline made the change' }) note:
    string | null;

  static from(revision: ScheduleRevision): RevisionDto {
    return {
      revision: revision.revision,
      change: revision.change,
      changedByApiKeyId: revision.changedByApiKeyId,
      changedAt: revision.changedAt.toISOString(),
      changes: revision.changes,
      definition: revision.definition,
      note: revision.note,
    };
  }
}

export class RevisionPageDto {
  @ApiProperty({ type: [RevisionDto] }) items: RevisionDto[];
  @ApiProperty({ type: String, nullable: true }) nextCursor: string | null;
}

/**
 * A revision number in a path: a malformed one is the same 404 as one that does not exist. The
 * route declares the parameter a string, so nothing has converted it (`0x1`) before this check.
 */
export function revisionNumberOf(value: string): number {
  if (!/^[1-9]\d{0,8}$/.test(value)) {
    throw new NotFoundError('schedule revision', value.slice(0, 16));
  }
  return Number(value);
}
