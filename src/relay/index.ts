export { AdmissionLoop } from './admission-loop';
export { AutoPauseLoop } from './auto-pause-loop';
export { HistoryMaintenanceLoop } from './history-maintenance-loop';
export { LeaseSweeper } from './lease-sweeper';
export { RelayModule } from './relay.module';
export { RelayService } from './relay.service';
