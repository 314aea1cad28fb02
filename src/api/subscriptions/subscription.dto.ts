import { ApiProperty } from '@nestjs/swagger';
import { ArrayMaxSize, ArrayMinSize, IsArray, IsIn, IsUUID } from 'class-validator';
import { EVENT_TYPES, type EventType, type Subscription } from '../../subscriptions';
import { PageQueryDto } from '../common/page-query.dto';

export class CreateSubscriptionDto {
  @ApiProperty({ format: 'uuid', description: 'an existing target of the tenant: where events go' })
  @IsUUID()
  targetId: string;

  @ApiProperty({
    enum: EVENT_TYPES,
    enumName: 'EventType',
    isArray: true,
    minItems: 1,
    maxItems: EVENT_TYPES.length,
    example: ['run.failed', 'run.unknown'],
    description:
      'The event types to send (each opt-in, run.succeeded included): run.failed, run.unknown, ' +
      "run.succeeded (a run ended so), run.late (a run started more than its schedule's " +
      'lateAfterSeconds after it was due), occurrence.skipped (an instant recorded SKIPPED, ' +
      'with its reason code), schedule.paused (by request or auto-pause, with reason and note), ' +
      'target.disabled (a 410 Gone or a PATCH).',
  })
  @IsArray()
  @ArrayMinSize(1)
  @ArrayMaxSize(EVENT_TYPES.length)
  @IsIn(EVENT_TYPES, { each: true })
  eventTypes: EventType[];
}

export class SubscriptionDto {
  @ApiProperty({ format: 'uuid' }) id: string;
  @ApiProperty({ format: 'uuid' }) targetId: string;
  @ApiProperty({ enum: EVENT_TYPES, enumName: 'EventType', isArray: true })
  eventTypes: EventType[];
  @ApiProperty({ format: 'date-time' }) createdAt: string;

  static from(subscription: Subscription): SubscriptionDto {
    return {
      id: subscription.id,
      targetId: subscription.targetId,
      eventTypes: subscription.eventTypes,
      createdAt: subscription.createdAt.toISOString(),
    };
  }
}

export class SubscriptionPageDto {
  @ApiProperty({ type: [SubscriptionDto] }) items: SubscriptionDto[];
  @ApiProperty({ type: String, nullable: true }) nextCursor: string | null;
}

export class ListSubscriptionsQueryDto extends PageQueryDto {}
