package dev.rdmarpc.core.internal.call;

/**
 * Marks core's own handler of single-request methods ({@code ServerCalls}' unary and server-streaming one): the
 * response observer it makes lets core's call go once it ended it ({@link ReleasableCall#released}), so a server
 * stream that started it unwrapped (no interceptor in front, which could keep the call) may serve its connection's
 * next call ({@link Recycling}). Calls of every method start the same way, {@code ServerCallHandler.startCall}, and
 * deliver to a listener: this only tells the stream recycling is allowed. For rpc-core alone.
 */
public interface ReleasingHandler {
}
