// Prisma 7 keeps the connection URL out of schema.prisma. Only `prisma generate` reads this file
// here: migrations go through prisma/tools/migrate.ts (the offline WASM schema engine).
import { defineConfig } from 'prisma/config';

export default defineConfig({
  schema: 'prisma/schema.prisma',
  migrations: { path: 'prisma/migrations' },
  datasource: { url: process.env.DATABASE_URL ?? 'postgresql://postgres@127.0.0.1:5432/timeshare' },
});
