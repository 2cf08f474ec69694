/**
 * `timeshare checkpoints list|download`. A download goes to `<file>.part` first and resumes from
 * its length with `Range` (and `If-Range`: the checkpoint's ETag, so that a changed file comes
 * whole) when the part's sidecar says it holds this checkpoint (partial-download.ts); the whole
 * file's sha256 (the part already there included) must equal the one the API recorded before it is
 * renamed into place.
 */
import { createHash } from 'node:crypto';
import { createReadStream, createWriteStream } from 'node:fs';
import { Transform } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { Readable } from 'node:stream';
import type { ReadableStream as WebReadableStream } from 'node:stream/web';
import type { Command } from 'commander';
import { SingleBar, Presets } from 'cli-progress';
import { TimeshareError, unwrap, type Checkpoint } from '../../sdk/src/index.js';
import { CliError, type Context } from '../context.js';
import { emit, table } from '../output.js';
import { claimPart, discardPart, finishPart, resumablePart } from '../partial-download.js';

async function hashFile(file: string, hash: ReturnType<typeof createHash>): Promise<void> {
  for await (const chunk of createReadStream(file)) hash.update(chunk as Buffer);
}

export function checkpointCommands(program: Command, ctx: () => Context): void {
  const cmd = program.command('checkpoints').description("a job's checkpoints (safetensors)");

  cmd
    .command('list <job>')
    .description('committed checkpoints, oldest first')
    .action(async (job: string) => {
      const c = ctx();
      const client = await c.tenant();
      const { data } = await unwrap(
        client.GET('/v1/jobs/{id}/checkpoints', { params: { path: { id: job } } }),
      );
      emit(c, data, () =>
        console.log(
          table(
            ['id', 'step', 'bytes', 'sha256', 'created'],
            data.map((k) => [k.id, k.step, k.sizeBytes, k.sha256, k.createdAt]),
          ),
        ),
      );
    });

  cmd
    .command('download <job> [checkpoint]')
    .description('download a checkpoint (default: the latest); resumes a partial download; verifies sha256')
    .option('-o, --output <file>', 'where to write it (default: checkpoint-step<N>.safetensors)')
    .action(async (job: string, checkpointId: string | undefined, opts: { output?: string }) => {
      const c = ctx();
      const client = await c.tenant();
      const { data } = await unwrap(
        client.GET('/v1/jobs/{id}/checkpoints', { params: { path: { id: job } } }),
      );
      const ck: Checkpoint | undefined = checkpointId
        ? data.find((k) => k.id === checkpointId)
        : data[data.length - 1];
      if (!ck)
        throw new CliError(
          'not_found',
          checkpointId ? `no checkpoint ${checkpointId} in job ${job}` : `job ${job} has no checkpoint yet`,
        );
      const out = opts.output ?? `checkpoint-step${ck.step}.safetensors`;
      const part = `${out}.part`;
      const owner = { job, checkpoint: ck.id, sha256: ck.sha256 };
      const found = await resumablePart(part, owner, ck.sizeBytes);
      let have = found.have;
      if (found.stale && !c.json)
        console.error(`${part} is not a download of checkpoint ${ck.id}: starting over`);
      await claimPart(part, owner);
      const hash = createHash('sha256');
      if (have < ck.sizeBytes) {
        // The content route's ETag is the quoted sha256: a range of any other file comes whole.
        const res = await client.GET('/v1/jobs/{id}/checkpoints/{checkpointId}/content', {
          params: { path: { id: job, checkpointId: ck.id } },
          headers: have > 0 ? { Range: `bytes=${have}-`, 'If-Range': `"${ck.sha256}"` } : {},
          parseAs: 'stream',
        });
        if (!res.response.ok || !res.data) throw TimeshareError.from(res.response.status, res.error);
        // A server that ignores Range, or a file other than the If-Range one, comes whole: start
        // over rather than append it.
        if (have > 0 && res.response.status !== 206) have = 0;
        if (have > 0) await hashFile(part, hash);
        const resumed = have;
        const bar = new SingleBar(
          { format: '{bar} {percentage}% | {value}/{total} bytes', stream: process.stderr, hideCursor: true },
          Presets.shades_classic,
        );
        if (!c.json) bar.start(ck.sizeBytes, have);
        let received = have;
        const tap = new Transform({
          transform(chunk: Buffer, _enc, done) {
            hash.update(chunk);
            received += chunk.length;
            if (!c.json) bar.update(received);
            done(null, chunk);
          },
        });
        try {
          await pipeline(
            Readable.fromWeb(res.data as WebReadableStream<Uint8Array>),
            tap,
            createWriteStream(part, { flags: resumed > 0 ? 'a' : 'w' }),
          );
        } finally {
          bar.stop();
        }
        if (resumed > 0 && !c.json) console.error(`resumed from byte ${resumed}`);
      } else {
        await hashFile(part, hash);
      }
      const sha256 = hash.digest('hex');
      if (sha256 !== ck.sha256) {
        // A corrupt part is useless for resuming: remove it so the next try starts clean.
        await discardPart(part);
        throw new CliError('checksum_mismatch', `sha256 ${sha256} does not match the recorded ${ck.sha256}`);
      }
      await finishPart(part, out);
      emit(c, { ...ck, file: out, verified: true }, () =>
        console.log(`${out}  ${ck.sizeBytes} bytes  sha256 ${sha256} verified`),
      );
    });
}
