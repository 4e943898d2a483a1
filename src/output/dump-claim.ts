/**
 * `list -o FILE` has one writer: a run claims FILE with `FILE.idcli-run` beside it, holding its pid and host, and
 * lets it go when it ends. A second run on the same FILE meets the claim and stops at once (exit 2) naming the
 * first; a claim whose process is gone (a run killed outright) is taken over, so a killed run is continued as
 * before (docs/cli.md, "list -o").
 */
import { closeSync, linkSync, lstatSync, unlinkSync } from 'node:fs';
import { hostname } from 'node:os';
import { ExitCode, IdcliError } from '../errors.js';
import { errCode } from '../fs-faults.js';
import { createPrivateFileSync, removeQuietly } from '../private-file.js';
import { openNoFollow, readBounded, refuseOpenedFile } from '../private-path.js';
import { processRunning } from '../store/pid.js';

export const CLAIM_SUFFIX = '.idcli-run';

interface Holder {
  pid: number;
  host: string;
}

/**
 * Claims `file` (its resolved path; `shown` is how the user named it) for this run and returns the release. Exit 2
 * when another live run holds it; the file system's error when the claim cannot be created.
 */
export function claimDump(file: string, shown: string): () => void {
  const path = `${file}${CLAIM_SUFFIX}`;
  const me: Holder = { pid: process.pid, host: hostname() };
  // Written whole under a temp name first and then linked in (link(2) never replaces a name), so a claim is never
  // seen half written, and one without a pid never stands for a live run.
  const tmp = `${path}.${process.pid}.tmp`;
  removeQuietly(tmp);
  createPrivateFileSync(tmp, `${JSON.stringify(me)}\n`);
  try {
    for (let attempt = 0; attempt < 3; attempt++) {
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
      const holder = readHolder(path, shown);
      if (holder !== undefined && (holder.host !== me.host || processRunning(holder.pid))) {
        const where = holder.host === me.host ? '' : ` on ${holder.host}`;
        throw new IdcliError(
          `${shown} is being written by another idcli run (pid ${holder.pid}${where})`,
          ExitCode.USAGE,
          { hint: `wait for it to end, or stop it; if no run is left, remove ${path}` },
        );
      }
      // Its run is gone: killed outright, it could not let go.
      try {
        unlinkSync(path);
      } catch (err) {
        if (errCode(err) !== 'ENOENT') throw err;
      }
    }
    throw new IdcliError(`${shown} is being claimed by another idcli run`, ExitCode.USAGE, {
      hint: 'wait for it to end, or stop it',
    });
  } finally {
    removeQuietly(tmp);
  }
}

/** The run a claim names; undefined for one that is not a claim idcli wrote (then no run can be told from it). */
function readHolder(path: string, shown: string): Holder | undefined {
  let fd: number;
  try {
    fd = openNoFollow(path);
  } catch (err) {
    if (errCode(err) === 'ENOENT') return undefined;
    if (errCode(err) === 'ELOOP') throw planted(path, shown);
    throw err;
  }
  try {
    refuseOpenedFile(fd, path, `remove it, or name another file for -o than ${shown}`);
    const o = JSON.parse(readBounded(fd, 4096)) as Partial<Holder> | null;
    if (typeof o?.pid === 'number' && typeof o.host === 'string') return { pid: o.pid, host: o.host };
    return undefined;
  } catch (err) {
    if (err instanceof IdcliError) throw err;
    return undefined;
  } finally {
    closeSync(fd);
  }
}

function planted(path: string, shown: string): IdcliError {
  let what = 'something else';
  try {
    what = `a symbolic link of uid ${lstatSync(path).uid}`;
  } catch {
    // Gone since: the message stays general.
  }
  return new IdcliError(`refusing to use ${path}: it is ${what}, not a claim of idcli`, ExitCode.USAGE, {
    hint: `remove it, or name another file for -o than ${shown}`,
  });
}
