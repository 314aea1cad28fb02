export { ApiModule } from './api.module';
