/** `list -o FILE`'s one writer claims `FILE.idcli-run` (pid, host); a dead run's claim is taken over (docs/cli.md). */
import { closeSync, linkSync, lstatSync, unlinkSync } from 'node:fs';
import { hostname } from 'node:os';
import { type IdcliError, usageError } from '../errors.js';
import { errCode, isJsonObject } from '../shape.js';
import { createPrivateFileSync, removeQuietly } from '../private-file.js';
import { openNoFollow, readBounded, refuseOpenedFile } from '../private-path.js';
import { processRunning } from '../store/pid.js';

export const CLAIM_SUFFIX = '.idcli-run';

interface Holder {
  pid: number;
  host: string;
  /** Tells this claim from a later one of the same pid. */
  nonce: string;
}

/** Claims `file` (resolved; `shown` as the user named it) and returns the release; exit 2 when a live run holds it. */
export function claimDump(file: string, shown: string): () => void {
  const path = `${file}${CLAIM_SUFFIX}`;
  const me: Holder = { pid: process.pid, host: hostname(), nonce: nonce() };
  // Written whole under a temp name first and then linked in (link(2) never replaces a name), so a claim is never
  // seen half written, and one without a pid never stands for a live run.
  const tmp = `${path}.${process.pid}.tmp`;
  removeQuietly(tmp);
  createPrivateFileSync(tmp, `${JSON.stringify(me)}\n`);
  try {
    for (let attempt = 0; attempt < 5; attempt++) {
      try {
        linkSync(tmp, path);
        let held = true;
        return () => {
          // Once only: a second removal could take away the claim of a run that started since.
          if (held) removeQuietly(path);
          held = false;
        };
      } catch (err) {
        if (errCode(err) !== 'EEXIST') throw err;
      }
      const seen = readClaim(path, shown);
      if (seen === undefined) continue; // let go of since
      const { holder } = seen;
      if (holder !== undefined && (holder.host !== me.host || processRunning(holder.pid))) {
        const where = holder.host === me.host ? '' : ` on ${holder.host}`;
        throw usageError(
          'OUTPUT_CLAIMED',
          `${shown} is being written by another idcli run (pid ${holder.pid}${where})`,
          `wait for it to end, or stop it; if no run is left, remove ${path}`,
        );
      }
      // Its run is gone: killed outright, it could not let go.
      takeOver(path, seen.text);
    }
    throw usageError(
      'OUTPUT_CLAIMED',
      `${shown} is being claimed by another idcli run`,
      'wait for it to end, or stop it',
    );
  } finally {
    removeQuietly(tmp);
  }
}

/** Removes the claim if it still reads `stale`, under an exclusive `<claim>.reap`: never a claim made since. */
function takeOver(path: string, stale: string): void {
  const reaper = `${path}.reap`;
  try {
    createPrivateFileSync(reaper, `${process.pid}\n`);
  } catch (err) {
    if (errCode(err) !== 'EEXIST') throw err;
    // Another run takes it over now, or died doing so: its pid tells.
    let pid = Number.NaN;
    try {
      const fd = openNoFollow(reaper);
      try {
        pid = Number(readBounded(fd, 64).trim());
      } finally {
        closeSync(fd);
      }
    } catch {
      // Gone since, or not a file to read: nothing is removed, and the next round looks again.
    }
    if (Number.isSafeInteger(pid) && pid > 0 && !processRunning(pid)) removeQuietly(reaper);
    return;
  }
  try {
    if (readClaim(path, path)?.text === stale) unlinkSync(path);
  } catch (err) {
    if (errCode(err) !== 'ENOENT') throw err;
  } finally {
    removeQuietly(reaper);
  }
}

/** Undefined when there is no claim; `holder` undefined for one that is not a claim idcli wrote. */
function readClaim(path: string, shown: string): { text: string; holder: Holder | undefined } | undefined {
  const hint = `remove it, or name another file for -o than ${shown}`;
  let fd: number;
  try {
    fd = openNoFollow(path);
  } catch (err) {
    if (errCode(err) === 'ENOENT') return undefined;
    if (errCode(err) === 'ELOOP') throw planted(path, hint);
    throw err;
  }
  try {
    refuseOpenedFile(fd, path, hint);
    const text = readBounded(fd, 4096);
    return { text, holder: holderIn(text) };
  } finally {
    closeSync(fd);
  }
}

function holderIn(text: string): Holder | undefined {
  try {
    const o: unknown = JSON.parse(text);
    if (isJsonObject(o) && typeof o.pid === 'number' && typeof o.host === 'string' && typeof o.nonce === 'string')
      return { pid: o.pid, host: o.host, nonce: o.nonce };
  } catch {
    // Not a claim of idcli's.
  }
  return undefined;
}

function planted(path: string, hint: string): IdcliError {
  let what = 'something else';
  try {
    what = `a symbolic link of uid ${lstatSync(path).uid}`;
  } catch {
    // Gone since: the message stays general.
  }
  return usageError('OUTPUT_CLAIM_FOREIGN', `refusing to use ${path}: it is ${what}, not a claim of idcli`, hint);
}

/** node:crypto loads here only, so a list to stdout does not pay for it at start-up. */
const nonce = (): string => process.getBuiltinModule('node:crypto').randomBytes(8).toString('hex');
