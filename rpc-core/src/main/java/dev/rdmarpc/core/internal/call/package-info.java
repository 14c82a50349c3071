/**
 * The calls: each side's stream state machine ({@link dev.rdmarpc.core.internal.call.ClientStream},
 * {@link dev.rdmarpc.core.internal.call.ServerStream}) with its send and receive sides, the opening of a client stream
 * on a connection ({@link dev.rdmarpc.core.internal.call.ClientStreamOpener}), delivery of callbacks
 * ({@link dev.rdmarpc.core.internal.call.CallDrain} and its two loops), per-stream flow control and framing
 * ({@link dev.rdmarpc.core.internal.call.OutboundFlow}, {@link dev.rdmarpc.core.internal.call.InboundMessages},
 * {@link dev.rdmarpc.core.internal.call.MessageFramer}, {@link dev.rdmarpc.core.internal.call.Gzip}) and opt-in
 * recycling ({@link dev.rdmarpc.core.internal.call.Recycling}). Uses every other internal package; of them only
 * {@code internal.attachment} uses it back (attachment framing), and {@code internal.channel} and
 * {@code internal.server} open its streams.
 */
package dev.rdmarpc.core.internal.call;
