/**
 * What a walk tells the one who runs it, phase by phase, as undici's dispatch handlers are told of a request's
 * (onRequestStart, onResponseStart, onResponseEnd…): the walk decides, its caller reports. Every phase is optional.
 */
import type { Page } from './envelope.js';
import type { WindowChange } from './window.js';

export interface WalkEvents {
  /** The server refused the page size idcli chose for the first request: the walk asks once more with `retry`. */
  onFallback?: (sizes: { refused: number; retry: number }) => void;
  /** The walk goes one page after the other: why the collection cannot be fetched by pageIndex in parallel. */
  onSequential?: (reason: string) => void;
  /** The window of pages in flight changed (under `adaptive`, or held by the byte cap), and why. */
  onWindow?: (change: WindowChange) => void;
  /** A page was written: the counts so far, and (when there is more) the URL that fetches exactly what follows it. */
  onPage?: (written: { pages: number; items: number; page: Page; rest: string | undefined }) => void;
  /** The walk ended, before it returns or throws: at the end or limit, with the reader gone, or on a failure. */
  onStop?: (stop: WalkStop) => void;
}

export interface WalkStop {
  reason: 'done' | 'reader-gone' | 'failed';
  pages: number;
  items: number;
}
