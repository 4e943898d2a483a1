/**
 * The bytes a walk holds, counted as they arrive (a Content-Length from the first byte): past the cap a page waits,
 * its socket paused, until a page is written; the oldest always goes on, being written next. So the walk holds at most
 * the cap plus one page, and a request starts only while a page of the largest size so far fits, or when no other is
 * in flight (a page larger than the cap still comes, alone). Pure.
 */

/** The bytes of the pages a walk holds at once, besides the next to be written (see docs/cli.md, Concurrency). */
export const WINDOW_BYTES = 64 * 1024 * 1024;

export class ByteBudget {
  /** Bytes held by each page not yet written, by its number: in the order they started, which is the written order. */
  private readonly pages = new Map<number, number>();
  /** How to resume each paused page. */
  private readonly paused = new Map<number, (() => void)[]>();
  private held = 0;
  private largest = 0;
  private count = 0;
  private told = false;

  constructor(
    private readonly cap = WINDOW_BYTES,
    /** Told once, the first time the cap holds a page back or keeps a request from starting. */
    private readonly onLimit?: (largest: number, cap: number) => void,
  ) {}

  /** A page request starts: its bytes count from now until it is released. Returns the page's number. */
  start(): number {
    const seq = this.count++;
    this.pages.set(seq, 0);
    return seq;
  }

  /** The bytes all pages hold now. */
  get bytes(): number {
    return this.held;
  }

  /** Whether one more page of the largest size so far fits beside those held and those on their way (as large). */
  get roomForOne(): boolean {
    if (this.pages.size === 0) return true;
    let committed = this.largest;
    for (const bytes of this.pages.values()) committed += Math.max(bytes, this.largest);
    if (committed <= this.cap) return true;
    this.limited();
    return false;
  }

  /** Page `seq` now holds `bytes`: true if it may go on, false if it waits until `resume` is called. */
  hold(seq: number, bytes: number, resume: () => void): boolean {
    const before = this.pages.get(seq);
    if (before === undefined) return true;
    this.pages.set(seq, bytes);
    this.held += bytes - before;
    this.largest = Math.max(this.largest, bytes);
    if (this.held <= this.cap || seq === this.head) return true;
    const waiting = this.paused.get(seq);
    if (waiting) waiting.push(resume);
    else this.paused.set(seq, [resume]);
    this.limited();
    return false;
  }

  /** Page `seq` was written or dropped: its bytes are free, and paused pages go on while they fit. */
  release(seq: number): void {
    const bytes = this.pages.get(seq);
    if (bytes === undefined) return;
    this.pages.delete(seq);
    this.paused.delete(seq);
    this.held -= bytes;
    const head = this.head;
    // In the order they are written: the oldest whatever the cap, the others while there is room.
    const order = [...this.paused.keys()].sort((a, b) => a - b);
    for (const waiting of order) {
      if (waiting !== head && this.held >= this.cap) break;
      const resumes = this.paused.get(waiting) ?? [];
      this.paused.delete(waiting);
      for (const resume of resumes) resume();
    }
  }

  /** The oldest page not yet released was written. */
  releaseOldest(): void {
    const head = this.head;
    if (head !== undefined) this.release(head);
  }

  /** The oldest page not yet written. */
  private get head(): number | undefined {
    for (const seq of this.pages.keys()) return seq;
    return undefined;
  }

  private limited(): void {
    if (this.told) return;
    this.told = true;
    this.onLimit?.(this.largest, this.cap);
  }
}
