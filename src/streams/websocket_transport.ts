/**
 * The WebSocket transport: each event one text frame, the close code saying
 * why a socket ended. Deno's server socket sends the pings itself (its
 * `idleTimeout`); the hub's heartbeat has nothing to add.
 * @module
 */

import { CLOSE_CODES } from "../http/catalogue.ts";
import type { StreamEvent } from "./event_stream_format.ts";
import type { BudgetShare } from "./stream_budget.ts";
import type { EndReason, Transport } from "./transport.ts";

/**
 * A socket of the hub. Frames written before the upgrade completes (the
 * catch-up runs while the handshake is under way) wait here, counted as
 * queued and held as the very frames other readers hold, and go out in
 * order once the socket opens. From then on Deno holds a copy of each frame
 * per socket, which `bufferedAmount` counts (the reader's own bytes).
 */
export class WebSocketTransport implements Transport {
  readonly socket: WebSocket;
  /** Frames waiting for the socket to open; `undefined` once it has. */
  #pending: string[] | undefined = [];
  #pendingLength = 0;
  /** Set when the stream ended before the socket opened. */
  #closing: EndReason | undefined;

  #share: BudgetShare;

  /**
   * Carries events on `socket`, holding its pending frames in `share`;
   * `gone` is told when the socket closes or its upgrade fails.
   */
  constructor(socket: WebSocket, gone: () => void, share: BudgetShare) {
    this.socket = socket;
    this.#share = share;
    socket.addEventListener("open", () => {
      // Deno opens a socket whose close() came during the handshake as if
      // none had: it is closed now, with the code it was ended with.
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
      // UTF-16 units: the bytes before the handshake are only roughly
      // counted; Deno counts them once they are on the socket.
      this.#pendingLength += frame.length;
      this.#share.hold(frame, frame.length);
    }
  }

  get queuedBytes(): number {
    return this.#pendingLength + this.socket.bufferedAmount;
  }

  heartbeat(): void {
    // Deno pings after `idleTimeout` without a frame from the client.
  }

  close(reason: EndReason): void {
    this.#pending = undefined;
    this.#pendingLength = 0;
    if (this.socket.readyState === WebSocket.CONNECTING) {
      this.#closing = reason;
    } else closeFor(this.socket, reason);
  }
}

/** Closes `socket` with the code for `reason`, and says why in the close frame. */
function closeFor(socket: WebSocket, reason: EndReason): void {
  const { code, when } = CLOSE_CODES[reason];
  socket.close(code, when);
}
