package dev.rdmarpc.core.internal.call;

/**
 * Marks core's own call objects that take null for metadata with no entries, so a call through them makes no empty
 * {@link dev.rdmarpc.core.Metadata}: a {@code ClientCall} or {@code ServerCall} of core's (the streams themselves, not
 * a wrapper) sends nothing for null request headers, response headers or trailers; a listener or handler of
 * {@code ClientCalls}/{@code ServerCalls} may be given null headers or trailers and makes its own empty instance
 * whenever it hands one to application code, so an application never sees null, nor an instance another call
 * shares. Anything else (an interceptor's wrapper, an application's listener) is always given a new instance. For
 * rpc-core alone.
 */
public interface NullForEmptyMetadata {
    /**
     * Metadata with no entries for {@code recipient} (a call, listener or handler): null, meaning none, when it is one
     * of core's that takes null, else a new instance of its own.
     */
    static dev.rdmarpc.core.Metadata emptyFor(Object recipient) {
        return recipient instanceof NullForEmptyMetadata ? null : new dev.rdmarpc.core.Metadata();
    }
}
