/** `idcli list`: stream a paginated collection to stdout as NDJSON (or print its size with --count). */
import { argument, defineCommand, option, type OptionsOf } from '../../argv/define.js';
import { openApiClient } from '../../apiclient/client.js';
import { clockOf } from '../../clock.js';
import { AUTO_PAGE_SIZE } from '../../config.js';
import { apiBaseUrl } from '../../apiclient/target.js';
import type { CommandContext } from '../../context.js';
import type { Deps } from '../../deps.js';
import { ExitCode, IdcliError, interrupted, OutputError, usageError } from '../../errors.js';
import { type DumpFile, openDump } from '../../output/dump-file.js';
import { createPageWriter, WriteCut } from '../../output/page-writer.js';
import { createProgress } from '../../output/progress.js';
import { stoppedMessage } from '../../output/resume-hint.js';
import { liveLineWanted } from '../../output/status-line.js';
import { type FetchContext, fetchPage } from '../../paginate/get-page.js';
import {
  type FirstRequest,
  firstRequest,
  resumedAt,
  type WalkEvents,
  WalkFailure,
  type WalkOptions,
  walk,
} from '../../paginate/walk.js';
import { WINDOW_CEILING } from '../../paginate/window.js';
import { redactUrl } from '../../redact.js';
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
    const first = firstRequest({ ...o, apiBase, setting: ctx.settings.pageSize() });
    const dump = openOutput(o, apiBase, first.apiOrigin, ctx);
    await countOrWalk(o, ctx, first, dump).finally(() => dump?.release());
  },
});

/** --count, or the walk to stdout or FILE, over one keep-alive client. */
async function countOrWalk(o: ListOptions, ctx: CommandContext, first: FirstRequest, dump?: DumpFile): Promise<void> {
  const { deps } = ctx;
  // A resumed dump continues from its recorded URL.
  const from = dump?.resumeUrl === undefined ? first : resumedAt(first, dump.resumeUrl);
  // --limit counts the items FILE already holds.
  const limit = dump && o.limit !== undefined ? Math.max(0, o.limit - dump.resumedItems) : o.limit;
  if (limit === 0 && !o.count) return dump?.complete();
  if (deps.signal.aborted) throw interrupted();

  const auto = o.concurrency === 'auto';
  const concurrency = typeof o.concurrency === 'number' ? Math.max(1, o.concurrency) : AUTO_CONCURRENCY;
  const plan = { first: from, limit, concurrency, adaptive: auto };
  // One keep-alive agent for the whole walk: prefetch needs a second socket, each page of the window one more.
  const sockets = (auto ? WINDOW_CEILING : concurrency) + 1;
  const client = await openApiClient(ctx, { maxSockets: sockets, maxRetries: o.maxRetries });
  try {
    if (o.count) await printCount({ client }, from.url, deps);
    else await walkToStdout(plan, { client }, deps, dump);
  } finally {
    client.close();
  }
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
  const writer = createPageWriter(deps.stdout, () => {}, { signal: deps.signal, clock: clockOf(deps) });
  const page = await fetchPage(fetchCtx, firstUrl, deps.signal);
  if (page.totalItems === undefined) {
    const why = `${redactUrl(firstUrl)} does not report totalItems, so it cannot be counted`;
    throw new IdcliError('CONTRACT_NO_TOTAL_ITEMS', why, ExitCode.CONTRACT);
  }
  await writer.write(`${page.totalItems}\n`);
}

/** The walk with its live progress line, its summary, and on a stop the resume command. */
async function walkToStdout(plan: WalkOptions, fetchCtx: FetchContext, deps: Deps, dump?: DumpFile) {
  const readerGone = new AbortController();
  const clock = clockOf(deps);
  const writer =
    dump?.writer ?? createPageWriter(deps.stdout, () => readerGone.abort(), { signal: deps.signal, clock });
  const before = dump?.resumedItems ?? 0;
  const progress = startProgress(deps, plan.limit === undefined ? undefined : before + plan.limit);
  const started = deps.now();
  try {
    const events: WalkEvents = {
      onFallback: ({ refused, retry }) =>
        deps.log.verbose(
          `the server refused pageSize=${refused}, the size idcli chose; asking again with its default of ${retry}`,
        ),
      // Asked for by number, a fallback is news; under auto it is how such a collection is walked.
      onSequential: (reason) =>
        deps.log[plan.adaptive ? 'verbose' : 'info'](`--concurrency ignored: ${reason}; fetching pages one by one`),
      onWindow: ({ from, to, reason }) => {
        const change = from === to ? `held at ${to}` : `${from} → ${to}`;
        const mode = plan.adaptive ? 'auto' : plan.concurrency;
        deps.log.verbose(`--concurrency ${mode}: ${change} pages in flight: ${reason}`);
      },
      onPage: ({ pages, items, page, rest }) => {
        dump?.pageWritten(items, rest);
        if (pages === 1) progress.setTotal(page.totalItems);
        progress.update(pages, before + items);
      },
      onStop: () => progress.stop(),
    };
    const io = { fetch: fetchCtx, clock, writer, interrupt: deps.signal, readerGone: readerGone.signal };
    const result = await walk(plan, io, events);
    dump?.complete();
    if (deps.stderr.isTTY === true && !result.readerGone) {
      const seconds = ((deps.now() - started) / 1000).toFixed(1);
      deps.log.info(`${result.items} items in ${result.pages} ${result.pages === 1 ? 'page' : 'pages'} (${seconds} s)`);
    }
  } catch (err) {
    progress.stop();
    if (!(err instanceof WalkFailure)) throw dump ? dump.stopped(err, deps.stderr) : err;
    throw dump ? dump.stopped(err.cause, deps.stderr) : stopped(err, deps);
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

/** Says how far a stopped walk got and how to resume it; returns its cause, the error the run ends with. */
function stopped(err: WalkFailure, deps: Deps): unknown {
  const { cause } = err;
  // A stop signal while the reader took no more: the lines it did take of that page count (skipped on resuming).
  const cut = cause instanceof WriteCut ? cause.lines : 0;
  // Shown even with --quiet, so a partial dump is not taken for a complete one; before the first page only for a
  // lost output, which a script reading stderr must not mistake for an empty collection.
  if (err.pages > 0 || cut > 0 || cause instanceof OutputError)
    deps.stderr.write(stoppedMessage(err.written + cut, err.resumeUrl, cut, deps.log.redact));
  return cause;
}
