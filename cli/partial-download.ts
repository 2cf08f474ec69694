/**
 * The `<out>.part` of an interrupted checkpoint download, and the sidecar `<out>.part.json` that
 * says whose bytes it holds: job, checkpoint and sha256. A part is resumed only when its sidecar
 * names the checkpoint being downloaded; any other (another checkpoint's, or one left without a
 * sidecar) is deleted and the download starts over, since its bytes would only fail the sha256
 * check at the end. The sidecar is written before the first byte and deleted after the rename.
 */
import { readFile, rename, stat, unlink, writeFile } from 'node:fs/promises';

export interface PartOwner {
  job: string;
  checkpoint: string;
  sha256: string;
}

const sidecarOf = (part: string) => `${part}.json`;

async function sizeOf(file: string): Promise<number | null> {
  return stat(file).then(
    (s) => s.size,
    () => null,
  );
}

async function readOwner(part: string): Promise<Partial<PartOwner> | null> {
  try {
    return JSON.parse(await readFile(sidecarOf(part), 'utf8')) as Partial<PartOwner>;
  } catch {
    // None, or torn by a crash while it was written: either way it vouches for nothing.
    return null;
  }
}

/** Deletes the part and its sidecar (neither need exist). */
export async function discardPart(part: string): Promise<void> {
  const gone = (err: NodeJS.ErrnoException) => {
    if (err.code !== 'ENOENT') throw err;
  };
  await unlink(part).catch(gone);
  await unlink(sidecarOf(part)).catch(gone);
}

/**
 * How many bytes of `part` a download of `owner` (`size` bytes in all) can keep: its length when
 * the sidecar names that checkpoint and it is no longer than the file, else 0 after deleting it.
 * `stale` is true when a part was there and was deleted.
 */
export async function resumablePart(
  part: string,
  owner: PartOwner,
  size: number,
): Promise<{ have: number; stale: boolean }> {
  const have = await sizeOf(part);
  if (have === null) {
    await discardPart(part);
    return { have: 0, stale: false };
  }
  const held = await readOwner(part);
  const same =
    held?.job === owner.job && held.checkpoint === owner.checkpoint && held.sha256 === owner.sha256;
  if (same && have <= size) return { have, stale: false };
  await discardPart(part);
  return { have: 0, stale: true };
}

/** Says whose bytes `part` is about to hold, before the first one is written. */
export async function claimPart(part: string, owner: PartOwner): Promise<void> {
  await writeFile(sidecarOf(part), JSON.stringify(owner) + '\n');
}

/** Moves a verified part into place and deletes its sidecar. */
export async function finishPart(part: string, out: string): Promise<void> {
  await rename(part, out);
  await unlink(sidecarOf(part)).catch(() => undefined);
}
