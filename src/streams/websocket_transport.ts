/**
 * The WebSocket transport. Deno's server socket sends the pings itself (`idleTimeout`).
 * @module
 */

import { CLOSE_CODES } from "../http/catalogue.ts";
import type { StreamEvent } from "./event_stream_format.ts";
import type { BudgetShare } from "./stream_budget.ts";
import type { EndReason, Transport } from "./transport.ts";

/** Frames written before the upgrade completes wait here, counted and shared, then go out in order. */
export class WebSocketTransport implements Transport {
  readonly socket: WebSocket;
  #pending: string[] | undefined = [];
  #pendingLength = 0;
  #closing: EndReason | undefined;

  #share: BudgetShare;

  #gone: () => void;
  /** `performance.now()` by which Deno must have opened the socket. */
  #openBy: number;

  /**
   * Gone if not open within `openWithinMs`, as the hub's beat finds: Deno sends the 101 before the
   * socket opens, and one whose client reset the connection meanwhile never opens, pings nor
   * closes (architecture.md). The beat checks, not a timer per socket (issue 35).
   */
  constructor(
    socket: WebSocket,
    gone: () => void,
    share: BudgetShare,
    openWithinMs: number,
  ) {
    this.socket = socket;
    this.#share = share;
    this.#gone = gone;
    this.#openBy = performance.now() + openWithinMs;
    socket.addEventListener("open", () => {
      // Deno opens a socket closed during the handshake as if it were not: close it now.
      if (this.#closing !== undefined) closeFor(socket, this.#closing);
      const pending = this.#pending ?? [];
      this.#pending = undefined;
      this.#pendingLength = 0;
      for (const frame of pending) {
        socket.send(frame);
        share.drop(frame);
      }
      share.measure();
    }, { once: true });
    socket.addEventListener("close", gone, { once: true });
    socket.addEventListener("error", gone, { once: true });
  }

  send(event: StreamEvent): void {
    const frame = event.frame;
    if (this.#pending === undefined) this.socket.send(frame);
    else {
      this.#pending.push(frame);
      // UTF-16 units: only roughly counted until Deno holds them.
      this.#pendingLength += frame.length;
      this.#share.hold(frame, frame.length);
    }
  }

  get queuedBytes(): number {
    return this.#pendingLength + this.socket.bufferedAmount;
  }

  /** Deno pings after `idleTimeout` without a frame from the client; the beat only checks the opening. */
  beat(now: number): void {
    if (this.socket.readyState !== WebSocket.CONNECTING || now < this.#openBy) {
      return;
    }
    this.#openBy = Infinity;
    // Closed as Deno closes a silent peer (1001), should it open after all.
    this.close("stopping");
    this.#gone();
  }

  close(reason: EndReason): void {
    this.#pending = undefined;
    this.#pendingLength = 0;
    if (this.socket.readyState === WebSocket.CONNECTING) {
      this.#closing = reason;
    } else closeFor(this.socket, reason);
  }
}

function closeFor(socket: WebSocket, reason: EndReason): void {
  const { code, when } = CLOSE_CODES[reason];
  socket.close(code, when);
}
