/**
 * The field types every node message is built from. A node is trusted with the jobs placed on it
 * and nothing more, so what it sends is bounded to what the columns hold (int4, bigint, text
 * without NUL) and refused with a 400 at the edge instead of failing in PostgreSQL with a 500.
 */
import { z } from '../zod.js';

export const INT4_MAX = 2_147_483_647;

/** An `integer` column (steps, tokens, batch sizes, device counts). */
export const int4 = (min = 0) => z.number().int().min(min).max(INT4_MAX);

/**
 * A `bigint` column of bytes. JSON numbers are exact up to 2^53 − 1, far below bigint's limit, so
 * that is the bound: a larger number would be rounded before it reached the column.
 */
export const byteCount = () => z.number().int().min(0).max(Number.MAX_SAFE_INTEGER);

/** Seconds of one measurement: bounded so that sums stay finite; a year is far beyond any stage. */
export const seconds = () =>
  z
    .number()
    .min(0)
    .max(366 * 24 * 3600);

/**
 * What JSON cannot write: a number that is not finite travels as its name. A diverged run's loss is
 * NaN, and JSON.stringify writes it as null, which a number field refuses (and the whole report
 * with it: since node protocol 2 it is sent as `"NaN"`).
 */
export const nonFiniteNames = ['NaN', 'Infinity', '-Infinity'] as const;
export type NonFiniteName = (typeof nonFiniteNames)[number];

/** A measured value: any number, non-finite ones by name (`toWireNumber`). */
export const wireNumber = () => z.union([z.number(), z.enum(nonFiniteNames)]);
export type WireNumber = number | NonFiniteName;

/** `v` as JSON can carry it. */
export const toWireNumber = (v: number): WireNumber =>
  Number.isFinite(v) ? v : (String(v) as NonFiniteName);

/** PostgreSQL text and jsonb cannot hold NUL; refuse it rather than fail in the database. */
export const noNul = (s: string) => !s.includes('\u0000');
const NUL_MESSAGE = 'must not contain NUL characters';

/** Non-empty text of at most `max` characters, without NUL. */
export const text = (max: number) => z.string().min(1).max(max).refine(noNul, NUL_MESSAGE);

/** Possibly empty text of at most `max` characters, without NUL. */
export const anyText = (max: number) => z.string().max(max).refine(noNul, NUL_MESSAGE);

const scalar = z.union([anyText(1024), z.number(), z.boolean(), z.null()]);
const smallRecord = <T extends z.ZodType>(value: T, max: number) =>
  z.record(text(64), value).refine((r) => Object.keys(r).length <= max, `at most ${max} entries`);

/**
 * Free-form metadata a node attaches (a checkpoint's meta): two levels of named scalars, which is
 * all the worker writes, each string NUL-free so that it fits jsonb.
 */
export const metaSchema = smallRecord(z.union([scalar, smallRecord(scalar, 32)]), 32);
