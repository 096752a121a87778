/**
 * The chat page's history: scrolled to the top, the next older page goes
 * above, and what the reader was looking at stays put. It names no DOM type,
 * so `deno test` runs it with a list of its own.
 * @module
 */

/** The part of a scroll or wheel event the loader reads. */
export interface ScrollSignal {
  readonly deltaY?: number;
}

/** What the loader needs of the conversation's list. */
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

/** One page of the history, newest first; `next` is `null` when none is older. */
export interface OlderPage<Item> {
  messages: Item[];
  next: number | null;
}

/** Options of {@linkcode loadOlderOnScroll}. */
export interface OlderOptions<Item, Entry> {
  list: ScrollingList<Entry>;
  page(before: number): Promise<OlderPage<Item>>;
  /** Nothing loads until one is shown: the stream's catch-up brings the newest. */
  oldestShown(): number | undefined;
  render(item: Item): Entry;
  /** How near the top counts as the top, in pixels. Default 40. */
  margin?: number;
}

/** What {@linkcode loadOlderOnScroll} returns. */
export interface OlderLoader {
  /** Puts the next older page above, unless one is on its way or none is left. */
  loadMore(): Promise<void>;
  /** `false` once the history holds nothing older. */
  readonly more: boolean;
  /** The next page goes below the oldest shown by then. */
  restart(): void;
}

/**
 * Loads older messages above `list` when the reader scrolls (or turns the
 * wheel) up to its top, and goes on while the list is too short to scroll.
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

  /** `false` when there was no page to ask for. */
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
    if (loading !== undefined) return await loading;
    loading = (async () => {
      try {
        while ((await loadPage()) && before !== null && !canScroll());
      } finally {
        loading = undefined;
      }
    })();
    return await loading;
  }

  const atTop = () => list.scrollTop <= margin;
  // A failed page is tried again on the next scroll.
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
