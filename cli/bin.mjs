#!/usr/bin/env node
// The `timeshare` bin. The CLI is TypeScript like the rest of the repo; tsx (which `npm start`
// also runs on) loads it without a build step.
import { register } from 'tsx/esm/api';

register();
await import('./main.ts');
