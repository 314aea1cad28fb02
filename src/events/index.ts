export { EVENT_DELIVERY_STATES, type ClaimedEvent, type EventDeliveryState } from './event';
export { EventEntity } from './event.entity';
export { EventsModule } from './events.module';
export { EventsService } from './events.service';
export { lateStartEventsOf } from './events.sql';
