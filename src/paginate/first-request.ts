/**
 * The walk's first request: the target resolved against api-base-url with the page size the setting, the target and
 * --limit decide (page-size.ts), the size to fall back to when the server refuses idcli's own, and how such a refusal
 * is told when it ends the walk (docs/cli.md, "Page size").
 */
import { apiOrigin, targetUrl } from '../apiclient/target.js';
import type { PageSizeSetting } from '../config.js';
import { ExitCode, IdcliError, usageError } from '../errors.js';
import { withReason } from '../http/status-text.js';
import { redactUrl } from '../redact.js';
import { cannotWalk, firstPageSize, refusesPageSize } from './page-size.js';
import { refusedWith } from './get-page.js';

export interface FirstRequest {
  url: string;
  /** The API's origin: every URL of the walk stays on it. */
  apiOrigin: string;
  /** The page size idcli chose itself (`auto`), the target as the user gave it, and the size to ask with once more. */
  chosen?: { asGiven: string; size: number; fallback?: { size: number; url: string } };
}

/** What the first request is built from: the command line's target, page index and limit, and the setting. */
export interface FirstRequestInput {
  target: string;
  apiBase: string;
  setting: PageSizeSetting;
  /** --page-size as given: a number overrides the target's own pageSize. */
  pageSize?: string | number;
  pageIndex?: number;
  limit?: number;
  /** --count: ask for pageSize=0, the contract's way of reading just the metadata. */
  count?: boolean;
}

/** The first request, and the one to ask when the server refuses idcli's own page size; a size the user chose is kept. */
export function firstRequest(input: FirstRequestInput): FirstRequest {
  const { target: given, apiBase, setting, count } = input;
  // --count asks with pageSize=0 itself, whatever the setting.
  if (setting === 0 && !count) throw cannotWalk('page-size 0');
  // api-base-url is checked before the target, as for every target resolved against it.
  const origin = apiOrigin(apiBase);
  if (given.trim() === '')
    throw usageError('TARGET_MISSING', 'list needs a collection path or URL, e.g. idcli list /v1/users');
  const target = { pageIndex: input.pageIndex, count };
  // Only a number given as the flag overrides the target's own pageSize.
  const asGiven = targetUrl(given, apiBase, target);
  const ownSize = new URL(asGiven).searchParams.get('pageSize');
  const targetHasSize = typeof input.pageSize !== 'number' && ownSize !== null;
  if (targetHasSize && !count && ownSize.trim() !== '' && Number(ownSize) === 0)
    throw cannotWalk("the target's pageSize=0");
  const { size, fallback } = firstPageSize(setting, targetHasSize, input.limit);
  const url = targetUrl(given, apiBase, { ...target, pageSize: size });
  if (setting !== 'auto' || size === undefined) return { url, apiOrigin: origin };
  const chosen = { asGiven, size };
  if (fallback === undefined) return { url, apiOrigin: origin, chosen };
  const fallbackUrl = targetUrl(given, apiBase, { ...target, pageSize: fallback });
  return { url, apiOrigin: origin, chosen: { ...chosen, fallback: { size: fallback, url: fallbackUrl } } };
}

/** A walk resumed from a URL a run recorded: that run settled its page size, so nothing is chosen or fallen back to. */
export function resumedAt(first: FirstRequest, url: string): FirstRequest {
  return { url, apiOrigin: first.apiOrigin };
}

/**
 * Why a walk stopped before its first page: a refusal of the page size idcli chose is told as idcli's choice, with
 * the sizes asked; any other cause as it is.
 */
export function firstPageRefused(cause: unknown, first: FirstRequest): unknown {
  const status = refusedWith(cause);
  if (first.chosen === undefined || status === undefined || !refusesPageSize(status)) return cause;
  const { asGiven, size, fallback } = first.chosen;
  const then = fallback === undefined ? '' : `, then the service default of ${fallback.size}`;
  return new IdcliError(
    'PAGE_SIZE_REFUSED',
    `GET ${redactUrl(asGiven)} failed: HTTP ${withReason(status)} to the page size idcli chose ` + `(${size}${then})`,
    ExitCode.NETWORK,
    { cause, hint: 'give --page-size a size the server accepts, or --page-size service to send none' },
  );
}
