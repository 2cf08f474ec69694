/**
 * How long a child whose launcher died may take to stop after SIGTERM (parent-watch.ts). Its own
 * file: parent-watch is loaded into every child, and must not load the launcher's configuration.
 */
import { millis } from '../../common/config-values.js';

export const parentGraceShape = { TIMESHARE_PARENT_GRACE_MS: millis(0).default(30_000) };
