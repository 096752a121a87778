/**
 * What carries a reader of the hub: the hub decides what and when; a transport writes, measures, ends.
 * @module
 */

import type { StreamEvent } from "./event_stream_format.ts";
import type { BudgetShare } from "./stream_budget.ts";

/** Why a stream ends; a WebSocket tells it as a close code (src/http/catalogue.ts). */
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
  send(event: StreamEvent): void;
  /** Bytes written but not yet taken: the hub's per-reader bound, measured here only. */
  readonly queuedBytes: number;
  /** Every beat of the hub; `quiet` when nothing went out for a heartbeat. */
  beat(now: number, quiet: boolean): void;
  close(reason: EndReason): void;
}

/** `gone` is called once when the reader leaves; chunks other readers may keep too go in `share`. */
export type TransportFactory<T extends Transport> = (
  gone: () => void,
  share: BudgetShare,
) => T;
