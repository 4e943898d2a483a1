import { openApiClient } from '../apiclient/client.js';
import { apiBaseUrl, apiOrigin, targetUrl } from '../apiclient/target.js';
import type { ListOptions } from '../cmd/list.js';
import type { CommandContext } from '../context.js';
import type { Deps } from '../deps.js';
import { ExitCode, IdcliError, interrupted, OutputError, usageError } from '../errors.js';
import { type DumpFile, openDump } from '../output/dump-file.js';
import { createPageWriter, WriteCut } from '../output/page-writer.js';
import { createProgress } from '../output/progress.js';
import { stoppedMessage } from '../output/resume-hint.js';
import { liveLineWanted } from '../output/status-line.js';
import { type FetchContext, fetchPage } from '../paginate/fetch-page.js';
import { CONTRACT_PAGE_SIZE, firstPageSize, parsePageSize } from '../paginate/page-size.js';
import { WalkFailure, type WalkOptions, walk } from '../paginate/walk.js';
import { WINDOW_CEILING } from '../paginate/window.js';
import { redactUrl } from '../redact.js';
import { stderrStyle } from '../style.js';

/**
 * Pages in flight when `--concurrency auto` starts: a browser's handful of connections, from which the window grows
 * while the server keeps up (src/paginate/window.ts).
 */
export const AUTO_CONCURRENCY = 4;

/** `idcli list`: stream a paginated collection to stdout as NDJSON (or print its size with --count). */
export async function runList(opts: ListOptions, ctx: CommandContext): Promise<void> {
  const { deps, settings } = ctx;
  const apiBase = apiBaseUrl(settings);
  // Everything that can be refused without the network is refused before any request (exit 2).
  const first = firstRequest(opts, apiBase, opts.pageSize ?? settings.pageSize);
  const dump = openOutput(opts, apiBase, first.apiOrigin, ctx);
  // A resumed dump continues from its recorded URL, whose page size the run that started it settled.
  const { firstUrl, fallbackUrl } = dump?.resumeUrl === undefined ? first : { firstUrl: dump.resumeUrl };
  // --limit counts the items FILE already holds.
  const limit = dump && opts.limit !== undefined ? Math.max(0, opts.limit - dump.resumedItems) : opts.limit;
  if (limit === 0 && !opts.count) return dump?.complete();
  if (deps.signal.aborted) throw interrupted();

  const auto = opts.concurrency === 'auto';
  const concurrency = auto ? AUTO_CONCURRENCY : Math.max(1, opts.concurrency as number);
  const plan = { firstUrl, fallbackUrl, apiOrigin: first.apiOrigin, limit, concurrency, adaptive: auto };
  // One keep-alive agent for the whole walk: prefetch needs a second socket, each page of the window one more.
  const sockets = (auto ? WINDOW_CEILING : concurrency) + 1;
  const client = await openApiClient(ctx, { maxSockets: sockets, maxRetries: opts.maxRetries });
  try {
    if (opts.count) await printCount({ client }, firstUrl, deps);
    else await walkToStdout(plan, { client }, deps, dump);
  } finally {
    client.close();
  }
}

/**
 * The first request, and the one to ask instead when the server refuses idcli's own page size, with the API origin
 * they are on. A size the user chose is kept: the flag first, then a pageSize in the target, then the `page-size`
 * setting from the environment or config.
 */
function firstRequest(
  opts: ListOptions,
  apiBase: string,
  pageSize: string | number | undefined,
): { firstUrl: string; fallbackUrl?: string; apiOrigin: string } {
  const setting = typeof pageSize === 'number' ? pageSize : parsePageSize(pageSize);
  // api-base-url is checked before the target, as for every target resolved against it.
  const origin = apiOrigin(apiBase);
  if (opts.target.trim() === '') throw usageError('list needs a collection path or URL, e.g. idcli list /v1/users');
  const target = { pageIndex: opts.pageIndex, count: opts.count };
  // Only a number given as the flag overrides the target's own pageSize.
  const targetHasSize =
    typeof opts.pageSize !== 'number' && new URL(targetUrl(opts.target, apiBase, target)).searchParams.has('pageSize');
  const { size, fallback } = firstPageSize(setting, targetHasSize, opts.limit);
  const firstUrl = targetUrl(opts.target, apiBase, { ...target, pageSize: size });
  if (fallback === undefined) return { firstUrl, apiOrigin: origin };
  const fallbackUrl = targetUrl(opts.target, apiBase, { ...target, pageSize: fallback });
  return { firstUrl, fallbackUrl, apiOrigin: origin };
}

/** `-o FILE`: the dump and its state, checked before any request; undefined for stdout (`-o -` too). */
function openOutput(opts: ListOptions, apiBase: string, origin: string, ctx: CommandContext): DumpFile | undefined {
  const file = opts.output === '-' ? undefined : opts.output;
  if (file === undefined) {
    if (opts.restart) throw usageError('--restart applies to -o FILE only');
    return undefined;
  }
  if (opts.count) throw usageError('--count prints one number; it cannot be written with -o');
  const walk = {
    target: opts.target,
    apiBaseUrl: apiBase,
    profile: ctx.settings.profile,
    pageSize: opts.pageSize ?? null,
    pageIndex: opts.pageIndex ?? null,
  };
  const { deps } = ctx;
  return openDump({
    file,
    walk,
    restart: opts.restart,
    apiOrigin: origin,
    info: (msg) => deps.log.info(msg),
    now: deps.now,
  });
}

/** --count: the first page's totalItems, asked with pageSize=0. */
async function printCount(fetchCtx: FetchContext, firstUrl: string, deps: Deps): Promise<void> {
  const writer = createPageWriter(deps.stdout, () => {}, deps.signal);
  const page = await fetchPage(fetchCtx, firstUrl, deps.signal);
  if (page.totalItems === undefined) {
    throw new IdcliError(
      `${redactUrl(firstUrl)} does not report totalItems, so it cannot be counted`,
      ExitCode.CONTRACT,
    );
  }
  await writer.write(`${page.totalItems}\n`);
}

/** The walk with its live progress line, its summary, and on a stop the resume command. */
async function walkToStdout(plan: WalkOptions, fetchCtx: FetchContext, deps: Deps, dump?: DumpFile): Promise<void> {
  const readerGone = new AbortController();
  const writer = dump?.writer ?? createPageWriter(deps.stdout, () => readerGone.abort(), deps.signal);
  const before = dump?.resumedItems ?? 0;
  const progress = startProgress(deps, plan.limit === undefined ? undefined : before + plan.limit);
  const started = deps.now();
  try {
    const result = await walk(plan, {
      fetch: fetchCtx,
      writer,
      interrupt: deps.signal,
      readerGone: readerGone.signal,
      onPage: (pages, items, page, rest) => {
        dump?.pageWritten(items, rest);
        if (pages === 1) progress.setTotal(page.totalItems);
        progress.update(pages, before + items);
      },
      onFallback: () =>
        deps.log.verbose(
          `the server refused pageSize=${new URL(plan.firstUrl).searchParams.get('pageSize')} (HTTP 400); asking again with its default of ${CONTRACT_PAGE_SIZE}`,
        ),
      // Asked for by number, a fallback is news; under auto it is how such a collection is walked.
      onSequentialFallback: (reason) => {
        const message = `--concurrency ignored: ${reason}; fetching pages one by one`;
        if (plan.adaptive) deps.log.verbose(message);
        else deps.log.info(message);
      },
      onWindow: ({ from, to, reason }) => {
        const change = from === to ? `stays at ${to}` : `${from} → ${to}`;
        deps.log.verbose(
          `--concurrency ${plan.adaptive ? 'auto' : plan.concurrency}: ${change} pages in flight: ${reason}`,
        );
      },
    });
    progress.stop();
    dump?.complete();
    if (deps.stderr.isTTY === true && !result.readerGone) {
      const seconds = ((deps.now() - started) / 1000).toFixed(1);
      deps.log.info(`${result.items} items in ${result.pages} ${result.pages === 1 ? 'page' : 'pages'} (${seconds} s)`);
    }
  } catch (err) {
    progress.stop();
    if (dump) throw dump.stopped(err instanceof WalkFailure ? err.cause : err, deps.stderr);
    throw err instanceof WalkFailure ? stopped(err, deps) : err;
  }
}

/** The live progress line on stderr, only for the walk: --count is one request with nothing to measure. */
function startProgress(deps: Deps, limit: number | undefined): ReturnType<typeof createProgress> {
  const style = stderrStyle(deps.stderr, deps.env);
  return createProgress({
    stream: deps.stderr,
    enabled: liveLineWanted(deps.stderr, deps.env, deps.log.isQuiet),
    now: () => deps.now(),
    limit,
    paint: { done: style.ok, todo: style.dim },
    messages: deps.log,
  });
}

/** Says how far a stopped walk got and how to resume it; returns the error the run ends with. */
function stopped(err: WalkFailure, deps: Deps): unknown {
  // A stop signal while the reader took no more: the lines it did take of that page count, and are skipped
  // when resuming from the page.
  const cut = err.cause instanceof WriteCut ? err.cause.lines : 0;
  // Shown even with --quiet: without it the user cannot tell a partial dump from a complete one.
  // Before the first page there is nothing partial, and the resume command would be the same command; a lost
  // output still says so, as a script reading stderr must not mistake it for an empty collection.
  if (err.pages > 0 || cut > 0 || err.cause instanceof OutputError)
    deps.stderr.write(stoppedMessage(err.written + cut, err.resumeUrl, cut, deps.log.redact));
  return err.cause;
}
