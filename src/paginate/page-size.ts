/**
 * The page size of a walk's first request: the `page-size` setting (`auto`, a number, or `service`), the target's own
 * pageSize, and --limit. Pure; the walk falls back once when the server refuses idcli's own larger size.
 */
import { usageError } from '../errors.js';
import { clip, printable } from '../printable.js';

/**
 * Items per page asked for under `auto`: a round trip per thousand items rather than per hundred is what lets a
 * walk approach the link's own speed far from the server, offset- and cursor-based alike.
 */
export const AUTO_PAGE_SIZE = 1000;
/** The service contract's default pageSize, asked for once when the server refuses AUTO_PAGE_SIZE. */
export const CONTRACT_PAGE_SIZE = 100;

export type PageSizeSetting = 'auto' | 'service' | number;

/** The `page-size` setting read: `auto` when unset; exit 2 for anything but auto, service or a whole number. */
export function parsePageSize(raw: string | undefined): PageSizeSetting {
  const value = raw?.trim() ?? '';
  if (value === '' || value === 'auto') return 'auto';
  if (value === 'service') return 'service';
  const n = /^\d{1,15}$/.test(value) ? Number(value) : NaN;
  if (!Number.isSafeInteger(n)) {
    throw usageError(
      `page-size must be auto, service or a whole number, not '${clip(printable(value), 40)}'`,
      'auto asks for larger pages than the service default; service sends no pageSize',
    );
  }
  return n;
}

export interface FirstPageSize {
  /** The pageSize to put into the first request; undefined leaves the target as it is. */
  size?: number;
  /** The size to ask with once more when the server refuses `size` with a 400 (idcli's own size only). */
  fallback?: number;
}

/**
 * What the first request asks for. A size the user chose is sent as is: the target's pageSize (`targetHasSize`,
 * false when the flag overrides it), else a number in the setting; `service` sends none; `auto` asks for
 * AUTO_PAGE_SIZE, or no more than --limit needs.
 */
export function firstPageSize(setting: PageSizeSetting, targetHasSize: boolean, limit?: number): FirstPageSize {
  if (targetHasSize) return {};
  if (typeof setting === 'number') return { size: setting };
  if (setting === 'service') return {};
  const size = limit === undefined ? AUTO_PAGE_SIZE : Math.max(1, Math.min(AUTO_PAGE_SIZE, limit));
  return size > CONTRACT_PAGE_SIZE ? { size, fallback: CONTRACT_PAGE_SIZE } : { size };
}
