/**
 * The chat page's history: at the top, the next older page goes above and the
 * reader's place stays put. No DOM types, so `deno test` runs it on a fake list.
 * @module
 */

const NEAR_TOP_PX = 40;
// Pages one fill may load: a list that still cannot scroll is filled on the next call.
const FILL_PAGES = 5;

/** The part of a scroll or wheel event the loader reads. */
export interface ScrollSignal {
  readonly deltaY?: number;
}

interface ScrollingList<Entry> {
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

interface OlderOptions<Item, Entry> {
  list: ScrollingList<Entry>;
  /** One page of the history, newest first; `next` is `null` when none is older. */
  page(before: number): Promise<{ messages: Item[]; next: number | null }>;
  /** Nothing loads until one is shown: the stream's catch-up brings the newest. */
  oldestShown(): number | undefined;
  render(item: Item): Entry;
}

interface OlderLoader {
  /** Puts the next older page above, unless one is on its way or none is left. */
  loadMore(): Promise<void>;
  readonly more: boolean;
  /** Loads older pages while the list cannot scroll (touch sends no wheel, a list that cannot scroll no scroll). */
  fill(): void;
  /** The next page goes below the oldest shown by then. */
  restart(): void;
}

/** Loads older pages when the reader scrolls (or wheels) to the top, and while the list cannot scroll. */
export function loadOlderOnScroll<Item, Entry>(
  options: OlderOptions<Item, Entry>,
): OlderLoader {
  const { list } = options;
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

  function loadMore(): Promise<void> {
    loading ??= (async () => {
      for (let pages = 1; await loadPage(); pages++) {
        if (before === null || canScroll() || pages === FILL_PAGES) break;
      }
    })().finally(() => loading = undefined);
    return loading;
  }

  // A failed page is tried again on the next scroll.
  const onScroll = (event: ScrollSignal) => {
    const up = event.deltaY === undefined || event.deltaY < 0;
    if (up && list.scrollTop <= NEAR_TOP_PX) loadMore().catch(() => {});
  };
  list.addEventListener("scroll", onScroll, { passive: true });
  list.addEventListener("wheel", onScroll, { passive: true });
  return {
    loadMore,
    fill() {
      if (before !== null && !canScroll()) loadMore().catch(() => {});
    },
    get more() {
      return before !== null;
    },
    restart() {
      before = undefined;
    },
  };
}
