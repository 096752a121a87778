/**
 * The chat page's history: when the reader scrolls up to the top of the
 * conversation, the next older page (`GET /messages`) is put above it, and
 * what the reader was looking at stays where it was on the screen.
 *
 * It names no DOM type, so it type-checks with the rest of `src/` and its
 * rules run under `deno test` with a list of its own; the page hands it
 * the conversation's `<ol>`.
 * @module
 */

/** A scroll event's part the loader reads: a wheel's direction, when it is a wheel. */
export interface ScrollSignal {
  readonly deltaY?: number;
}

/** What the loader needs of the conversation's list: where it is scrolled, and a way to put entries at its top. */
export interface ScrollingList<Entry> {
  scrollTop: number;
  readonly scrollHeight: number;
  readonly clientHeight: number;
  prepend(...entries: Entry[]): void;
  addEventListener(
    type: "scroll" | "wheel",
    listener: (event: ScrollSignal) => void,
    options: { passive: true },
  ): void;
}

/** One page of the history, newest first, and the `before` of the next older one (`null`: none). */
export interface OlderPage<Item> {
  messages: Item[];
  next: number | null;
}

/** Options of {@linkcode loadOlderOnScroll}. */
export interface OlderOptions<Item, Entry> {
  list: ScrollingList<Entry>;
  /** The page of messages below `before`. */
  page(before: number): Promise<OlderPage<Item>>;
  /**
   * The id of the oldest message shown, once one is: older pages go on
   * below it. Until then nothing is loaded, as the live stream's catch-up
   * brings the newest.
   */
  oldestShown(): number | undefined;
  /** Makes an item's entry (as the live messages are shown). */
  render(item: Item): Entry;
  /** How near the top counts as the top, in pixels. Default 40. */
  margin?: number;
}

/** The loader: `loadMore` puts the next older page above, unless one is on its way or none is left. */
export interface OlderLoader {
  loadMore(): Promise<void>;
  /** Whether older messages may still come: `false` once the history holds nothing older. */
  readonly more: boolean;
  /** Forgets where paging was: the next page goes below the oldest shown by then. */
  restart(): void;
}

/**
 * Loads older messages above `list` when the reader reaches its top, by
 * scrolling or by turning the wheel up when the list is too short to
 * scroll, and goes on while the list is still too short to scroll.
 *
 * @example A list too short to scroll fills up at once
 * ```ts
 * import assert from "node:assert/strict";
 * import { loadOlderOnScroll } from "./older_messages.ts";
 * const shown: number[] = [4, 5];
 * const list = {
 *   scrollTop: 0,
 *   clientHeight: 100,
 *   get scrollHeight() {
 *     return shown.length * 10;
 *   },
 *   prepend: (...ids: number[]) => shown.unshift(...ids),
 *   addEventListener() {},
 * };
 * const loader = loadOlderOnScroll({
 *   list,
 *   oldestShown: () => 4,
 *   page: (before) =>
 *     Promise.resolve({
 *       messages: before > 1 ? [before - 1] : [],
 *       next: before > 2 ? before - 1 : null,
 *     }),
 *   render: (id: number) => id,
 * });
 * await loader.loadMore();
 * assert.deepEqual(shown, [1, 2, 3, 4, 5]);
 * assert.equal(loader.more, false);
 * ```
 */
export function loadOlderOnScroll<Item, Entry>(
  options: OlderOptions<Item, Entry>,
): OlderLoader {
  const { list, margin = 40 } = options;
  // undefined: not started (below the oldest shown); null: nothing older.
  let before: number | null | undefined;
  let loading: Promise<void> | undefined;

  const canScroll = () => list.scrollHeight > list.clientHeight;

  /** Puts the next page above; `false` when there was none to ask for. */
  async function loadPage(): Promise<boolean> {
    const below = before ?? options.oldestShown();
    if (below === undefined || before === null) return false;
    const page = await options.page(below);
    before = page.next;
    // Kept from the bottom: the entries the reader sees do not move.
    const fromBottom = list.scrollHeight - list.scrollTop;
    list.prepend(...page.messages.toReversed().map(options.render));
    list.scrollTop = list.scrollHeight - fromBottom;
    return true;
  }

  async function loadMore(): Promise<void> {
    // One page at a time: a second scroll while one loads waits for it.
    if (loading !== undefined) return await loading;
    loading = (async () => {
      try {
        // Bounded by the history: each page moves `before` down.
        while ((await loadPage()) && before !== null && !canScroll());
      } finally {
        loading = undefined;
      }
    })();
    return await loading;
  }

  const atTop = () => list.scrollTop <= margin;
  // A failed page is tried again on the next scroll; the live stream and
  // the status line say when the service cannot be reached.
  const onScroll = (event: ScrollSignal) => {
    const up = event.deltaY === undefined || event.deltaY < 0;
    if (up && atTop()) loadMore().catch(() => {});
  };
  list.addEventListener("scroll", onScroll, { passive: true });
  list.addEventListener("wheel", onScroll, { passive: true });
  return {
    loadMore,
    get more() {
      return before !== null;
    },
    restart() {
      before = undefined;
    },
  };
}
