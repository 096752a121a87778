/**
 * One tab per browser follows the streams and tells the others, so tabs do not
 * run the browser out of connections (docs/architecture.md, "The chat page's tabs").
 * @module
 */

/** What a tab is told; a tab that starts says `hello`, and the leader greets it. */
type TabNews<Event> = { kind: "event"; event: Event } | { kind: "hello" };

interface SharedTabsOptions<Event> {
  /** The lock's and the channel's name. */
  name: string;
  /** Called once this tab leads. */
  lead(): void;
  /** Called when this tab starts without leading. */
  follow(): void;
  /** An event the leader told of, in a tab that does not lead. */
  hear(event: Event): void;
  /** In the leader: a tab has started and wants the state events would not repeat. */
  greet(): void;
}

/** This tab's part: whether it leads, and how the leader tells the others. */
export interface SharedTabs<Event> {
  readonly leading: boolean;
  /** Tells every other tab of `event`; only the leader's telling is sent. */
  tell(event: Event): void;
  /** Stops taking part, leaving the lock to the others. */
  close(): void;
}

/** Takes part in the tabs' sharing; `lead` and `follow` are called after it returns. */
export function shareAmongTabs<Event>(
  options: SharedTabsOptions<Event>,
): SharedTabs<Event> {
  const locks = (globalThis.navigator as { locks?: LockManagerLike })?.locks;
  const channel = typeof BroadcastChannel === "function" && locks !== undefined
    ? new BroadcastChannel(options.name)
    : undefined;
  const release = new AbortController();
  const tabs = {
    leading: false,
    tell(event: Event) {
      if (tabs.leading) channel?.postMessage({ kind: "event", event });
    },
    close() {
      release.abort();
      channel?.close();
    },
  };
  // Leads until the tab closes (or `close`), holding the lock as long.
  const lead = () => {
    tabs.leading = true;
    options.lead();
    return new Promise<void>((resolve) =>
      release.signal.addEventListener("abort", () => resolve())
    );
  };
  if (channel === undefined || locks === undefined) {
    queueMicrotask(lead);
    return tabs;
  }
  channel.onmessage = ({ data }) => {
    // Any script of the origin can post here.
    if (typeof data !== "object" || data === null) return;
    const news = data as TabNews<Event>;
    if (news.kind === "hello") {
      if (tabs.leading) options.greet();
    } else if (news.kind === "event" && !tabs.leading) options.hear(news.event);
  };
  locks.request(options.name, { ifAvailable: true }, (lock) => {
    if (lock !== null) return lead();
    options.follow();
    channel.postMessage({ kind: "hello" });
    locks.request(options.name, { signal: release.signal }, lead)
      .catch(() => {});
    return Promise.resolve();
  }).catch(() => {});
  return tabs;
}

/** The part of the Web Locks API used here (Deno's types lack it). */
interface LockManagerLike {
  request(
    name: string,
    options: { ifAvailable?: boolean; signal?: AbortSignal },
    callback: (lock: unknown) => Promise<void>,
  ): Promise<void>;
}
