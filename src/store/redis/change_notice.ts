/**
 * Change notices, built in Lua (`lua/notices.lua`). Only the first colon counts; the format is
 * that of earlier versions, so two versions sharing a Redis during an upgrade hear each other.
 * @module
 */

import type { StoreEvent } from "../store.ts";

/** A change as listeners hear it, or one only the store hears of: a user registered, a client limited. */
export type Notice =
  | Exclude<StoreEvent, { kind: "reset" }>
  | { kind: "registered" }
  | { kind: "limited"; client: string; waitMs: number };

/** `undefined` when not a notice of this version (another may share the channel). */
export function decodeNotice(text: string): Notice | undefined {
  const colon = text.indexOf(":");
  if (colon === -1) {
    return text === "users" ? { kind: "registered" } : undefined;
  }
  const kind = text.slice(0, colon);
  const rest = text.slice(colon + 1);
  switch (kind) {
    case "message": {
      const id = Number(/^[1-9]\d{0,15}(?= )/.exec(rest)?.[0]);
      if (!Number.isSafeInteger(id)) return undefined;
      return { kind: "message", id, json: rest.slice(String(id).length + 1) };
    }
    case "quote":
      return { kind: "quote", quote: rest };
    case "removed":
      return { kind: "unregistered", name: rest };
    case "online":
    case "offline":
      return { kind: "presence", name: rest, online: kind === "online" };
    case "limited": {
      const space = rest.indexOf(" ");
      const waitMs = Number(rest.slice(0, space));
      return space > 0 && Number.isSafeInteger(waitMs) && waitMs > 0
        ? { kind: "limited", client: rest.slice(space + 1), waitMs }
        : undefined;
    }
  }
  return undefined;
}
