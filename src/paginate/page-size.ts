/**
 * The page size of a walk's first request: the `page-size` setting (`auto`, a number, or `service`), the target's own
 * pageSize, and --limit. Pure; the walk falls back once when the server refuses idcli's own larger size.
 */
import { AUTO_PAGE_SIZE, type PageSizeSetting } from '../config.js';
import { type IdcliError, usageError } from '../errors.js';

/** The service contract's default pageSize, asked for once when the server refuses AUTO_PAGE_SIZE. */
export const CONTRACT_PAGE_SIZE = 100;

/** A page of 0 items moves no walk forward: it would loop or end at once with nothing (docs/cli.md, "Page size"). */
export function cannotWalk(what: string): IdcliError {
  return usageError(
    'PAGE_SIZE_ZERO',
    `${what} asks for pages of no items, which never reach the end of a collection`,
    'use --count for the number of items; to list them, give a page size of 1 or more, auto or service',
  );
}

/** Whether a status refusing the first request says no to its page size: 400 or 422, as servers differ. */
export function refusesPageSize(status: number | undefined): boolean {
  return status === 400 || status === 422;
}

export interface FirstPageSize {
  /** The pageSize to put into the first request; undefined leaves the target as it is. */
  size?: number;
  /** The size to ask with once more when the server refuses `size` (refusesPageSize; idcli's own size only). */
  fallback?: number;
}

/**
 * What the first request asks for: a size the user chose as is (the target's pageSize unless the flag overrides it,
 * else the setting's number); none for `service`; for `auto` AUTO_PAGE_SIZE, or no more than --limit needs.
 */
export function firstPageSize(setting: PageSizeSetting, targetHasSize: boolean, limit?: number): FirstPageSize {
  if (targetHasSize) return {};
  if (typeof setting === 'number') return { size: setting };
  if (setting === 'service') return {};
  const size = limit === undefined ? AUTO_PAGE_SIZE : Math.max(1, Math.min(AUTO_PAGE_SIZE, limit));
  return size > CONTRACT_PAGE_SIZE ? { size, fallback: CONTRACT_PAGE_SIZE } : { size };
}
