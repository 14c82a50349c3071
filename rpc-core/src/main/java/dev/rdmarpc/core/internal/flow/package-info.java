/**
 * Connection-level flow control (PROTOCOL.md "Flow control"): the receiver's connection window with its share of the
 * server's memory budget ({@link dev.rdmarpc.core.internal.flow.ConnectionWindow}) and the sender's view of the peer's
 * window ({@link dev.rdmarpc.core.internal.flow.ConnectionSendWindow}), both shared by the streams of one connection.
 * Depends only on the wire protocol ({@code dev.rdmarpc.core.protocol}); the streams' per-call halves and the
 * connections use it, never the other way round.
 */
package dev.rdmarpc.core.internal.flow;
