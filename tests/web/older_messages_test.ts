/** The page's history loader against a list of its own: where it asks from, how it keeps the reader's place, when it stops. */
import assert from "node:assert/strict";
import {
  loadOlderOnScroll,
  type ScrollSignal,
} from "../../src/web/older_messages.ts";

/** A list of ids, each entry 10 px high, in a box 100 px high, and a history of ids 1..`newest` in pages of `pageSize`. */
function setUp(shownIds: number[], newest = 100, pageSize = 20) {
  const shown = [...shownIds];
  const listeners: ((event: ScrollSignal) => void)[] = [];
  const asked: number[] = [];
  const list = {
    scrollTop: 0,
    clientHeight: 100,
    get scrollHeight() {
      return Math.max(this.clientHeight, shown.length * 10);
    },
    prepend: (...ids: number[]) => shown.unshift(...ids),
    addEventListener: (_: string, listener: (e: ScrollSignal) => void) =>
      listeners.push(listener),
  };
  let oldest: number | undefined = shownIds[0];
  const loader = loadOlderOnScroll({
    list,
    oldestShown: () => oldest,
    page(before) {
      asked.push(before);
      const ids = [];
      for (
        let id = Math.min(before - 1, newest);
        id >= 1 && ids.length < pageSize;
        id--
      ) {
        ids.push(id);
      }
      const last = ids.at(-1);
      return Promise.resolve({
        messages: ids,
        next: last !== undefined && last > 1 ? last : null,
      });
    },
    render: (id: number) => id,
  });
  const scroll = (event: ScrollSignal = {}) => {
    for (const listener of listeners) listener(event);
  };
  return {
    shown,
    list,
    loader,
    asked,
    scroll,
    show: (id: number) => oldest = id,
  };
}

Deno.test("scrolling to the top puts the page below the oldest shown above it, and the reader's entries stay where they were", async () => {
  const { shown, list, loader, asked, scroll } = setUp(
    Array.from({ length: 20 }, (_, i) => 81 + i),
  );
  list.scrollTop = 60;
  // Not at the top yet: nothing is asked.
  scroll();
  assert.deepEqual(asked, []);
  list.scrollTop = 5;
  scroll();
  await loader.loadMore();
  assert.deepEqual(asked, [81], "one page, as the list already scrolls");
  assert.deepEqual(shown.slice(0, 3), [61, 62, 63]);
  assert.equal(shown.length, 40);
  // 20 entries of 10 px came above: the view moved down by as much.
  assert.equal(list.scrollTop, 5 + 200);
});

Deno.test("nothing is asked before the stream has shown a message; a wheel turned down asks nothing", async () => {
  const { loader, asked, scroll, show, shown } = setUp([]);
  scroll();
  await loader.loadMore();
  assert.deepEqual(asked, []);
  show(3);
  scroll({ deltaY: 100 });
  assert.deepEqual(asked, []);
  scroll({ deltaY: -100 });
  await loader.loadMore();
  assert.deepEqual(asked, [3]);
  assert.deepEqual(shown, [1, 2]);
  assert.equal(loader.more, false);
});

Deno.test("scrolls while a page loads wait for it, and paging ends at the oldest message", async () => {
  const { shown, list, loader, asked, scroll } = setUp(
    Array.from({ length: 20 }, (_, i) => 41 + i),
    60,
  );
  for (let i = 0; i < 5; i++) scroll();
  await loader.loadMore();
  assert.deepEqual(asked, [41]);
  for (let i = 0; i < 3; i++) {
    list.scrollTop = 0;
    scroll();
    await loader.loadMore();
  }
  assert.deepEqual(asked, [41, 21], "none asked once next was null");
  assert.deepEqual(shown, Array.from({ length: 60 }, (_, i) => i + 1));
  assert.equal(loader.more, false);
});

Deno.test("a list too short to scroll fills up at once, a page at a time, until nothing is older", async () => {
  const { shown, loader, asked } = setUp([4, 5], 5, 1);
  await loader.loadMore();
  assert.deepEqual(asked, [4, 3, 2]);
  assert.deepEqual(shown, [1, 2, 3, 4, 5]);
  assert.equal(loader.more, false);
});

Deno.test("fill asks nothing while the list scrolls, and at most five pages at once while it cannot", async () => {
  const full = setUp(Array.from({ length: 20 }, (_, i) => 81 + i));
  full.loader.fill();
  await full.loader.loadMore();
  assert.deepEqual(full.asked, [81], "only the page loadMore asked for");
  const { loader, asked } = setUp([50], 50, 1);
  loader.fill();
  await loader.loadMore();
  assert.deepEqual(asked, [50, 49, 48, 47, 46]);
});
