/**
 * What a reader of the hub is carried by: a server-sent event stream or a
 * WebSocket. The hub decides what each reader gets and when; a transport
 * only puts events on its wire, says how much waits there, and ends.
 * @module
 */

import type { StreamEvent } from "./event_stream_format.ts";
import type { BudgetShare } from "./stream_budget.ts";

/**
 * Why a stream ends, which a WebSocket tells its reader as a close code:
 * - `reconnect`: the process lost track of changes (its subscription) or the
 *   store started afresh; the reader should reconnect and catch up.
 * - `overflow`: the reader fell past the bound on what may wait for it, or
 *   was furthest behind when all readers together passed theirs.
 * - `stopping`: the server is shutting down.
 * - `fault`: the catch-up or a token check failed (the store did not answer).
 * - `bad-frame`, `bad-token`: what a WebSocket's client sent is refused.
 * - `unregistered`: the user the stream was authenticated as is gone.
 * - `auth-failures`: its client failed to authenticate too often (wait).
 */
export type EndReason =
  | "reconnect"
  | "overflow"
  | "stopping"
  | "fault"
  | "bad-frame"
  | "bad-token"
  | "unregistered"
  | "auth-failures";

/** One reader's connection, as the hub drives it. */
export interface Transport {
  /** Puts `event` on the wire, encoded as this transport encodes it. */
  send(event: StreamEvent): void;
  /**
   * Bytes written but not yet taken by the reader. The hub ends the stream
   * when this passes its per-reader bound; each transport measures it in
   * this one place.
   */
  readonly queuedBytes: number;
  /** Called when the stream has been quiet for the heartbeat interval. */
  heartbeat(): void;
  /** Ends the connection for `reason`; the transport reports nothing back. */
  close(reason: EndReason): void;
}

/**
 * Builds a transport; `gone` is to be called once when the reader leaves by
 * itself (closes the connection), so the hub releases the stream. Chunks
 * the transport keeps that other readers may keep too (the same encoded
 * event) it holds in `share`, so that the hub's total counts them once.
 */
export type TransportFactory<T extends Transport> = (
  gone: () => void,
  share: BudgetShare,
) => T;
