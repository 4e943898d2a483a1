/** `idcli list`: stream a paginated collection to stdout as NDJSON (or print its size with --count). */
import { argument, defineCommand, option, type OptionsOf } from '../../argv/define.js';
import { openApiClient } from '../../apiclient/client.js';
import { AUTO_PAGE_SIZE, type PageSizeSetting } from '../../config.js';
import { apiBaseUrl, apiOrigin, targetUrl } from '../../apiclient/target.js';
import type { CommandContext } from '../../context.js';
import type { Deps } from '../../deps.js';
import { ExitCode, IdcliError, interrupted, OutputError, usageError } from '../../errors.js';
import { type DumpFile, openDump } from '../../output/dump-file.js';
import { createPageWriter, WriteCut } from '../../output/page-writer.js';
import { createProgress } from '../../output/progress.js';
import { stoppedMessage } from '../../output/resume-hint.js';
import { liveLineWanted } from '../../output/status-line.js';
import { type FetchContext, fetchPage, refusedWith } from '../../paginate/fetch-page.js';
import { cannotWalk, CONTRACT_PAGE_SIZE, firstPageSize, refusesPageSize } from '../../paginate/page-size.js';
import { WalkFailure, type WalkOptions, walk } from '../../paginate/walk.js';
import { WINDOW_CEILING } from '../../paginate/window.js';
import { redactUrl } from '../../redact.js';
import { withReason } from '../../http/status-text.js';
import { stderrStyle } from '../../style.js';

/** Pages in flight when `--concurrency auto` starts: a browser's handful of connections (src/paginate/window.ts). */
const AUTO_CONCURRENCY = 4;

const options = {
  target: argument({ name: 'path-or-url', description: 'collection path (resolved against api-base-url) or full URL' }),
  pageSize: option.setting('page-size'),
  pageIndex: option.integer({
    flag: '--page-index',
    value: '<n>',
    description: 'page to start at (offset-based collections)',
    min: 0,
  }),
  limit: option.integer({ flag: '--limit', value: '<n>', description: 'stop after this many items', min: 0 }),
  concurrency: option.integerOr({
    flag: '--concurrency',
    value: '<n>|auto',
    description: `pages in flight at once (offset-based, totalItems known); auto: from ${AUTO_CONCURRENCY} up to ${WINDOW_CEILING} while the server keeps up, lowered on a 429, a 503 or pages that slow down`,
    defaultValue: 'auto',
    keywords: ['auto'],
    min: 1,
    max: 64,
  }),
  count: option.boolean({ flag: '--count', description: 'print totalItems only' }),
  output: option.string({
    flag: '--output',
    short: '-o',
    value: '<file>',
    description: 'write to this file (- for stdout); the same command run again continues it',
  }),
  restart: option.boolean({ flag: '--restart', description: 'with -o: discard what an earlier run left, start over' }),
  maxRetries: option.retries('retries for 429, 502, 503, 504 and network errors'),
};
type ListOptions = OptionsOf<typeof options>;

export const command = defineCommand({
  name: 'list',
  summary: 'stream a paginated collection as NDJSON',
  description:
    'Stream every item of a paginated collection to stdout as NDJSON, one JSON object per line.\n' +
    'On a terminal, stderr shows the progress (a bar with the time left when totalItems or --limit gives the\n' +
    'size) and a one-line summary at the end; nothing of it on a pipe, with CI set or with --quiet.\n' +
    `Pages are transferred compressed (gzip, br; IDCLI_HTTP_COMPRESSION=0 asks for them uncompressed), ${AUTO_PAGE_SIZE} items\n` +
    'each unless --page-size says otherwise, and with --concurrency auto several are in flight at once when the\n' +
    `collection is offset-based with totalItems: from ${AUTO_CONCURRENCY}, growing to ${WINDOW_CEILING} while the server keeps up.`,
  options,
  examples: [
    'idcli list users > users.ndjson',
    "idcli list '/v1/users?filter=active' --limit 10 | jq -r .email",
    'idcli list users -o users.ndjson          # after a stop, the same command continues the file',
    'idcli list users --count                  # totalItems only',
    'idcli list users --concurrency 1 > users.ndjson  # strictly one page after the other',
    'IDCLI_ACCESS_TOKEN=$CI_TOKEN idcli list events --quiet > events.ndjson   # in CI, with a token from elsewhere',
  ],
  check(o) {
    const toFile = o.output !== undefined && o.output !== '-';
    if (o.restart && !toFile) throw usageError('USAGE_CONFLICTING_OPTIONS', '--restart applies to -o FILE only');
    if (o.count && toFile)
      throw usageError('USAGE_CONFLICTING_OPTIONS', '--count prints one number; it cannot be written with -o');
  },
  async run(o, invocation) {
    const ctx = await invocation.context();
    const apiBase = apiBaseUrl(ctx.settings);
    // Everything that can be refused without the network is refused before any request (exit 2).
    const first = firstRequest(o, apiBase, ctx.settings.pageSize());
    const dump = openOutput(o, apiBase, first.apiOrigin, ctx);
    await countOrWalk(o, ctx, first, dump).finally(() => dump?.release());
  },
});

/** --count, or the walk to stdout or FILE, over one keep-alive client. */
async function countOrWalk(o: ListOptions, ctx: CommandContext, first: FirstRequest, dump?: DumpFile): Promise<void> {
  const { deps } = ctx;
  // A resumed dump continues from its recorded URL, whose page size the run that started it settled.
  const { firstUrl, fallbackUrl } = dump?.resumeUrl === undefined ? first : { firstUrl: dump.resumeUrl };
  // --limit counts the items FILE already holds.
  const limit = dump && o.limit !== undefined ? Math.max(0, o.limit - dump.resumedItems) : o.limit;
  if (limit === 0 && !o.count) return dump?.complete();
  if (deps.signal.aborted) throw interrupted();

  const auto = o.concurrency === 'auto';
  const concurrency = typeof o.concurrency === 'number' ? Math.max(1, o.concurrency) : AUTO_CONCURRENCY;
  const plan = { firstUrl, fallbackUrl, apiOrigin: first.apiOrigin, limit, concurrency, adaptive: auto };
  // One keep-alive agent for the whole walk: prefetch needs a second socket, each page of the window one more.
  const sockets = (auto ? WINDOW_CEILING : concurrency) + 1;
  const client = await openApiClient(ctx, { maxSockets: sockets, maxRetries: o.maxRetries });
  try {
    if (o.count) await printCount({ client }, firstUrl, deps);
    else await walkToStdout(plan, { client }, deps, dump, dump?.resumeUrl === undefined ? first : undefined);
  } finally {
    client.close();
  }
}

/** The first request, and the one to ask when the server refuses idcli's own page size; a size the user chose is kept. */
function firstRequest(opts: ListOptions, apiBase: string, setting: PageSizeSetting): FirstRequest {
  // --count asks with pageSize=0 itself, whatever the setting.
  if (setting === 0 && !opts.count) throw cannotWalk('page-size 0');
  // api-base-url is checked before the target, as for every target resolved against it.
  const origin = apiOrigin(apiBase);
  if (opts.target.trim() === '')
    throw usageError('TARGET_MISSING', 'list needs a collection path or URL, e.g. idcli list /v1/users');
  const target = { pageIndex: opts.pageIndex, count: opts.count };
  // Only a number given as the flag overrides the target's own pageSize.
  const asGiven = targetUrl(opts.target, apiBase, target);
  const ownSize = new URL(asGiven).searchParams.get('pageSize');
  const targetHasSize = typeof opts.pageSize !== 'number' && ownSize !== null;
  if (targetHasSize && !opts.count && ownSize.trim() !== '' && Number(ownSize) === 0)
    throw cannotWalk("the target's pageSize=0");
  const { size, fallback } = firstPageSize(setting, targetHasSize, opts.limit);
  const firstUrl = targetUrl(opts.target, apiBase, { ...target, pageSize: size });
  const sizes = fallback === undefined ? [size!] : [size!, fallback];
  const chosen = setting === 'auto' && size !== undefined ? { asGiven, sizes } : undefined;
  const fallbackUrl =
    fallback === undefined ? undefined : targetUrl(opts.target, apiBase, { ...target, pageSize: fallback });
  return { firstUrl, fallbackUrl, apiOrigin: origin, chosen };
}

interface FirstRequest {
  firstUrl: string;
  fallbackUrl?: string;
  apiOrigin: string;
  /** The page sizes idcli chose itself (`auto`), in the order asked, and the target as the user gave it. */
  chosen?: { asGiven: string; sizes: number[] };
}

/** The first page refused for a page size idcli chose, told as idcli's choice (docs/cli.md, "Page size"). */
function chosenSizeRefused(err: WalkFailure, first: FirstRequest | undefined): unknown {
  const status = refusedWith(err.cause);
  if (err.pages > 0 || first?.chosen === undefined || status === undefined || !refusesPageSize(status))
    return err.cause;
  const [size, fallback] = first.chosen.sizes;
  const then = fallback === undefined ? '' : `, then the service default of ${fallback}`;
  return new IdcliError(
    'PAGE_SIZE_REFUSED',
    `GET ${redactUrl(first.chosen.asGiven)} failed: HTTP ${withReason(status)} to the page size idcli chose ` +
      `(${size}${then})`,
    ExitCode.NETWORK,
    { cause: err.cause, hint: 'give --page-size a size the server accepts, or --page-size service to send none' },
  );
}

/** `-o FILE`: the dump and its state, checked before any request; undefined for stdout (`-o -` too). */
function openOutput(opts: ListOptions, apiBase: string, origin: string, ctx: CommandContext): DumpFile | undefined {
  const { output: file, target, restart, limit } = opts;
  if (file === undefined || file === '-') return undefined;
  const [pageSize, pageIndex] = [opts.pageSize ?? null, opts.pageIndex ?? null];
  const walk = { target, apiBaseUrl: apiBase, profile: ctx.settings.profile, pageSize, pageIndex };
  const { deps } = ctx;
  return openDump({ file, walk, restart, limit, apiOrigin: origin, info: (msg) => deps.log.info(msg), now: deps.now });
}

/** --count: the first page's totalItems, asked with pageSize=0. */
async function printCount(fetchCtx: FetchContext, firstUrl: string, deps: Deps): Promise<void> {
  const writer = createPageWriter(deps.stdout, () => {}, deps.signal);
  const page = await fetchPage(fetchCtx, firstUrl, deps.signal);
  if (page.totalItems === undefined) {
    const why = `${redactUrl(firstUrl)} does not report totalItems, so it cannot be counted`;
    throw new IdcliError('CONTRACT_NO_TOTAL_ITEMS', why, ExitCode.CONTRACT);
  }
  await writer.write(`${page.totalItems}\n`);
}

/** The walk with its live progress line, its summary, and on a stop the resume command. */
async function walkToStdout(
  plan: WalkOptions,
  fetchCtx: FetchContext,
  deps: Deps,
  dump?: DumpFile,
  first?: FirstRequest,
) {
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
          `the server refused pageSize=${new URL(plan.firstUrl).searchParams.get('pageSize')}, the size idcli chose; asking again with its default of ${CONTRACT_PAGE_SIZE}`,
        ),
      // Asked for by number, a fallback is news; under auto it is how such a collection is walked.
      onSequentialFallback: (reason) =>
        deps.log[plan.adaptive ? 'verbose' : 'info'](`--concurrency ignored: ${reason}; fetching pages one by one`),
      onWindow: ({ from, to, reason }) => {
        const change = from === to ? `held at ${to}` : `${from} → ${to}`;
        const mode = plan.adaptive ? 'auto' : plan.concurrency;
        deps.log.verbose(`--concurrency ${mode}: ${change} pages in flight: ${reason}`);
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
    if (!(err instanceof WalkFailure)) throw dump ? dump.stopped(err, deps.stderr) : err;
    const cause = chosenSizeRefused(err, first);
    throw dump ? dump.stopped(cause, deps.stderr) : stopped(err, cause, deps);
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

/** Says how far a stopped walk got and how to resume it; returns `cause`, the error the run ends with. */
function stopped(err: WalkFailure, cause: unknown, deps: Deps): unknown {
  // A stop signal while the reader took no more: the lines it did take of that page count (skipped on resuming).
  const cut = cause instanceof WriteCut ? cause.lines : 0;
  // Shown even with --quiet, so a partial dump is not taken for a complete one; before the first page only for a
  // lost output, which a script reading stderr must not mistake for an empty collection.
  if (err.pages > 0 || cut > 0 || cause instanceof OutputError)
    deps.stderr.write(stoppedMessage(err.written + cut, err.resumeUrl, cut, deps.log.redact));
  return cause;
}
