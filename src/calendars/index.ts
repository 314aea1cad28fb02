export type { Calendar, CalendarPage } from './calendar';
export { CalendarEntity } from './calendar.entity';
export { CalendarsModule } from './calendars.module';
export { CalendarsService, MAX_CALENDAR_DATES } from './calendars.service';
