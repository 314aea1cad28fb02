import { MigrationInterface, QueryRunner } from 'typeorm';

/** Per-tenant dispatch token buckets, shared by every worker replica. */
export class DispatchBudget1796050000000 implements MigrationInterface {
  name = 'DispatchBudget1796050000000';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`
      CREATE TABLE "tenant_dispatch_budget" (
        "tenant_id" uuid NOT NULL,
        "tokens" double precision NOT NULL,
        "refilled_at" TIMESTAMP WITH TIME ZONE NOT NULL,
        CONSTRAINT "tenant_dispatch_budget_pkey" PRIMARY KEY ("tenant_id"),
        CONSTRAINT "tenant_dispatch_budget_tenant_id_fkey" FOREIGN KEY ("tenant_id")
          REFERENCES "tenants"("id") ON DELETE CASCADE ON UPDATE NO ACTION
      )`);
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`DROP TABLE "tenant_dispatch_budget"`);
  }
}
