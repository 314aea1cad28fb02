export interface Calendar {
  id: string;
  tenantId: string;
  name: string;
  dates: string[];
  createdAt: Date;
}

export interface CalendarPage {
  items: Calendar[];
  nextAfterId: string | null;
}
