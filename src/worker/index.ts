export { EventDeliverer } from './event-deliverer';
export { LeaseKeeper, type LeaseKeeperOptions } from './lease-keeper';
export { WorkerModule } from './worker.module';
export { WorkerService } from './worker.service';
