/**
 * A calendar's name is unique per tenant (calendars_tenant_name_key): of two creates with one
 * name one wins, the other gets no row back and answers 409.
 */
export const INSERT_CALENDAR = `
  INSERT INTO calendars (tenant_id, name, dates) VALUES ($1, $2, $3::jsonb)
  ON CONFLICT (tenant_id, name) DO NOTHING
  RETURNING id, tenant_id, name, dates, created_at`;
