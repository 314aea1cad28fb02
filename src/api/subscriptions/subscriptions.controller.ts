import { Body, Controller, Delete, Get, HttpCode, Param, Post, Query } from '@nestjs/common';
import {
  ApiBearerAuth,
  ApiCreatedResponse,
  ApiNoContentResponse,
  ApiOkResponse,
  ApiOperation,
  ApiTags,
} from '@nestjs/swagger';
import { ApiProblems, decodeCursor, encodeCursor } from '../../common';
import { MAX_SUBSCRIPTIONS_PER_TENANT, SubscriptionsService } from '../../subscriptions';
import type { Tenant } from '../../tenants';
import { CurrentTenant } from '../auth/current-tenant.decorator';
import { ResourceIdPipe } from '../common/resource-id.pipe';
import {
  CreateSubscriptionDto,
  ListSubscriptionsQueryDto,
  SubscriptionDto,
  SubscriptionPageDto,
} from './subscription.dto';

const subscriptionId = new ResourceIdPipe('subscription');

@ApiTags('subscriptions')
@ApiBearerAuth()
@ApiProblems(401, 429)
@Controller('subscriptions')
export class SubscriptionsController {
  constructor(private readonly subscriptions: SubscriptionsService) {}

  @Post()
  @ApiOperation({
    summary: 'Subscribe a target of the tenant to event types',
    description:
      'Events are Standard Webhooks messages to the target, signed with its active secrets ' +
      '(webhook-id = the event id, webhook-timestamp, webhook-signature), with its auth: body ' +
      '{ "type", "timestamp", "data" } (ids, states, reasons, instants; never a payload). ' +
      'Each event is written in the transaction of the change that caused it and delivered at ' +
      'least once, retried with backoff: deduplicate by webhook-id. ' +
      `At most ${MAX_SUBSCRIPTIONS_PER_TENANT} subscriptions per tenant (403 beyond).`,
  })
  @ApiCreatedResponse({ type: SubscriptionDto })
  @ApiProblems(400, 403, 404)
  async create(
    @CurrentTenant() tenant: Tenant,
    @Body() body: CreateSubscriptionDto,
  ): Promise<SubscriptionDto> {
    return SubscriptionDto.from(
      await this.subscriptions.create(tenant.id, body.targetId, body.eventTypes),
    );
  }

  @Get()
  @ApiOperation({ summary: "List the tenant's subscriptions, oldest first" })
  @ApiOkResponse({ type: SubscriptionPageDto })
  @ApiProblems(400)
  async list(
    @CurrentTenant() tenant: Tenant,
    @Query() query: ListSubscriptionsQueryDto,
  ): Promise<SubscriptionPageDto> {
    const page = await this.subscriptions.list(tenant.id, {
      limit: query.limit,
      afterId: decodeCursor(query.cursor),
    });
    return {
      items: page.items.map(SubscriptionDto.from),
      nextCursor: encodeCursor(page.nextAfterId),
    };
  }

  @Get(':id')
  @ApiOperation({ summary: 'Read a subscription' })
  @ApiOkResponse({ type: SubscriptionDto })
  @ApiProblems(404)
  async get(
    @CurrentTenant() tenant: Tenant,
    @Param('id', subscriptionId) id: string,
  ): Promise<SubscriptionDto> {
    return SubscriptionDto.from(await this.subscriptions.get(tenant.id, id));
  }

  @Delete(':id')
  @HttpCode(204)
  @ApiOperation({
    summary: 'Delete a subscription (its events not yet delivered are dropped with it)',
  })
  @ApiNoContentResponse({ description: 'Deleted' })
  @ApiProblems(404)
  async delete(
    @CurrentTenant() tenant: Tenant,
    @Param('id', subscriptionId) id: string,
  ): Promise<void> {
    await this.subscriptions.delete(tenant.id, id);
  }
}
