import type { Clock } from '../clock.js';
import { interrupted } from '../errors.js';
import { buildNdjsonInPlace } from './ndjson.js';
import type { Page } from './envelope.js';
import { createSpanTable } from './json-scan.js';
import { type FetchContext, parseRaw, type RawPage } from './get-page.js';
import { LinkBook } from './link-book.js';
import { PageScheduler, type Pending } from './page-scheduler.js';
import type { PageWriter } from '../output/page-writer.js';
import type { FirstRequest } from './first-request.js';
import type { WalkEvents } from './walk-events.js';

export interface WalkOptions {
  /** The first request, and the one asked instead when the server refuses idcli's own page size. */
  first: FirstRequest;
  limit?: number;
  concurrency?: number;
  /** `--concurrency auto`: the window starts at `concurrency` and adapts (see Window). */
  adaptive?: boolean;
}

export interface WalkContext {
  fetch: FetchContext;
  /** The run's clock (deps.clock). */
  clock: Clock;
  writer: PageWriter;
  /** Aborted on SIGINT. */
  interrupt: AbortSignal;
  /** Aborted when stdout's reader has gone; the walk then ends quietly. */
  readerGone: AbortSignal;
}

/** The walk stopped early with `cause`: `written` items from `pages` whole pages out; `resumeUrl` fetches the rest. */
export class WalkFailure extends Error {
  readonly written: number;
  readonly pages: number;
  readonly resumeUrl: string | undefined;
  constructor(cause: unknown, progress: { items: number; pages: number }, resumeUrl: string | undefined) {
    super('walk stopped', { cause });
    this.name = 'WalkFailure';
    this.written = progress.items;
    this.pages = progress.pages;
    this.resumeUrl = resumeUrl;
  }
}

export class ReaderGone extends Error {}

/** What every part of one walk shares: counts, the book of links, the scheduler, and how a page is parsed and written. */
export class WalkState {
  pages = 0;
  items = 0;
  readonly limit: number;
  readonly concurrency: number;
  readonly links: LinkBook;
  readonly scheduler: PageScheduler;
  /** Every page is parsed only when it is next to be written, so one span table serves the whole walk. */
  private readonly spans = createSpanTable();
  /** The first request, which pages fetched by pageIndex are built from: the fallback once that was asked. */
  firstUrl: string;

  constructor(
    readonly options: WalkOptions,
    readonly ctx: WalkContext,
    readonly events: WalkEvents,
  ) {
    this.limit = options.limit ?? Number.POSITIVE_INFINITY;
    this.firstUrl = options.first.url;
    this.links = new LinkBook(options.first.apiOrigin);
    this.concurrency = Math.max(1, options.concurrency ?? 1);
    const adaptive = options.adaptive === true && this.concurrency > 1;
    this.scheduler = new PageScheduler({ ...ctx, onWindow: events.onWindow }, this.concurrency, adaptive);
  }

  /** The walk stops with `err`; `resumeUrl` fetches exactly what is not written yet. */
  stopped(err: unknown, resumeUrl: string | undefined): WalkFailure {
    return new WalkFailure(err, { items: this.items, pages: this.pages }, resumeUrl);
  }

  /** A page's fetch awaited; its failure stops the walk with a resume from that page. */
  async settle<T>(p: Pending<T>): Promise<T> {
    try {
      return await p.promise;
    } catch (err) {
      this.scheduler.release(p.seq);
      throw this.failure(err, p.url);
    }
  }

  /** Why the walk stops: the reader gone, when it cancelled the request, else `err`. */
  failure(err: unknown, resumeUrl: string | undefined): Error {
    if (this.ctx.readerGone.aborted) return new ReaderGone();
    return this.stopped(err, resumeUrl);
  }

  /** A fetched page validated, or the walk stopped with a resume from it. */
  parse(raw: RawPage): Page {
    try {
      return parseRaw(raw, this.spans);
    } catch (err) {
      throw this.stopped(err, raw.url);
    }
  }

  /** Whether items after this page are still wanted under --limit. */
  wantsMoreAfter(page: Page): boolean {
    return this.items + page.itemCount < this.limit;
  }

  /** Writes the page (or its first items under --limit); stops the walk when the reader has gone. */
  async emit(page: Page, nextUrl: string | undefined): Promise<void> {
    const take = Math.min(page.itemCount, this.limit - this.items);
    const out = take > 0 ? buildNdjsonInPlace(page.body, page.items, take) : page.body.subarray(0, 0);
    let written: boolean;
    try {
      // Pages are written in the order they were asked for (those dropped unwritten are released as they are).
      written = await this.ctx.writer.write(out, () => this.scheduler.written(page.body));
    } catch (err) {
      // The output failed (a full disk): this page is not in it, so the resume starts with it.
      throw this.stopped(err, page.url);
    }
    if (!written) throw new ReaderGone();
    this.items += take;
    this.pages++;
    this.events.onPage?.({ pages: this.pages, items: this.items, page, rest: nextUrl });
    // SIGINT is honoured between pages, never inside one: no partial line reaches stdout.
    if (this.ctx.interrupt.aborted) throw this.failure(interrupted(), nextUrl);
  }
}
