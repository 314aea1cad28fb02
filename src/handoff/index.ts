export { HandoffModule } from './handoff.module';
export { NO_ROOM, type HandoffReceiver, type HandoffRoom } from './handoff-receiver';
export { RunHandoff } from './run-handoff';
