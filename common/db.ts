/**
 * PostgreSQL access: Prisma (Rust-free client + `pg` driver adapter) for ordinary queries, and the
 * same `pg` pool for the few hot-path statements written by hand (admission, see api/jobs/admit.ts).
 */
import pg from 'pg';
import { PrismaPg } from '@prisma/adapter-pg';
import { PrismaClient } from '../prisma/generated/client/client.js';

export type { PrismaClient };
export { Prisma } from '../prisma/generated/client/client.js';

export interface Database {
  prisma: PrismaClient;
  pool: pg.Pool;
  close(): Promise<void>;
}

export function connectDatabase(url: string, poolSize = 16): Database {
  const pool = new pg.Pool({ connectionString: url, max: poolSize });
  pool.on('error', () => {
    // An idle client lost its connection; the pool replaces it. Requests see their own errors.
  });
  const prisma = new PrismaClient({ adapter: new PrismaPg(pool) });
  return {
    prisma,
    pool,
    async close() {
      await prisma.$disconnect();
      await pool.end();
    },
  };
}
