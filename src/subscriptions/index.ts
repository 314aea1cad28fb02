export { EVENT_TYPES, isEventType, type EventType } from './event-type';
export {
  MAX_SUBSCRIPTIONS_PER_TENANT,
  type Subscription,
  type SubscriptionPage,
} from './subscription';
export { SubscriptionEntity } from './subscription.entity';
export { SubscriptionsModule } from './subscriptions.module';
export { SubscriptionsService } from './subscriptions.service';
