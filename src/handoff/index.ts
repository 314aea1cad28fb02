export { HandoffModule } from './handoff.module';
export { NO_ROOM, roomLeft, type HandoffReceiver, type HandoffRoom } from './handoff-receiver';
export { RunHandoff, type PendingHandoff } from './run-handoff';
