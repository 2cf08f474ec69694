/**
 * PostgreSQL access: Prisma (Rust-free client + `pg` driver adapter) for ordinary queries, and the
 * same `pg` pool for the few hot-path statements written by hand (admission, see api/jobs/admit.ts).
 */
import pg from 'pg';
import { PrismaPg } from '@prisma/adapter-pg';
import { createPool, type PoolLog } from './pg-pool.js';
import { PrismaClient } from '../prisma/generated/client/client.js';

export type { PrismaClient };
export { Prisma } from '../prisma/generated/client/client.js';
export { createPool, type PoolLog };

export interface Database {
  prisma: PrismaClient;
  pool: pg.Pool;
  close(): Promise<void>;
}

/**
 * Settings of every session: PostgreSQL's JIT off. Our statements are short, and its cost estimate
 * for per-job probes (a lateral index range for each of 1,000 jobs) crossed the JIT threshold: it
 * compiled for 63 ms a query that ran in 6, and a round's snapshot read at 1,000 running jobs took
 * 170–225 ms with it and 80–104 ms without (scheduler/bench/history.bench.ts).
 */
export const SESSION_OPTIONS = '-c jit=off';

export function connectDatabase(url: string, poolSize = 16, log?: PoolLog): Database {
  const pool = createPool({ connectionString: url, max: poolSize, options: SESSION_OPTIONS }, log);
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
