package dev.rdmarpc.core;

import java.time.Duration;
import java.util.concurrent.Executor;
import java.util.concurrent.TimeUnit;

/** Base of generated stubs: a channel plus call options, with immutable {@code with…} copies. */
public abstract class AbstractStub<S extends AbstractStub<S>> {
    private final Channel channel;
    private final CallOptions callOptions;

    protected AbstractStub(Channel channel, CallOptions callOptions) {
        this.channel = channel;
        this.callOptions = callOptions;
    }

    /** Creates a stub of the same kind with other options; generated stubs implement it. */
    protected abstract S build(Channel channel, CallOptions callOptions);

    public final Channel getChannel() {
        return channel;
    }

    public final CallOptions getCallOptions() {
        return callOptions;
    }

    public final S withDeadline(Deadline deadline) {
        return build(channel, callOptions.withDeadline(deadline));
    }

    public final S withDeadlineAfter(long duration, TimeUnit unit) {
        return build(channel, callOptions.withDeadlineAfter(duration, unit));
    }

    public final S withDeadlineAfter(Duration duration) {
        return build(channel, callOptions.withDeadlineAfter(duration));
    }

    /** Sends these headers with every call of the new stub. */
    public final S withHeaders(Metadata headers) {
        return build(channel, callOptions.withHeaders(headers));
    }

    /** A stub whose calls compress their requests with {@code compressorName} ("gzip"); see {@link CallOptions#withCompression}. */
    public final S withCompression(String compressorName) {
        return build(channel, callOptions.withCompression(compressorName));
    }

    /** Runs async callbacks of the new stub's calls on this executor. */
    public final S withExecutor(Executor executor) {
        return build(channel, callOptions.withExecutor(executor));
    }

    /**
     * Makes the new stub's calls through these interceptors, as {@link ClientInterceptors#intercept(Channel,
     * ClientInterceptor...)} does: the last one given runs first.
     */
    public final S withInterceptors(ClientInterceptor... interceptors) {
        return build(ClientInterceptors.intercept(channel, interceptors), callOptions);
    }

    /** Records response headers and trailers of the new stub's calls. */
    public final S withResponseMetadata(ResponseMetadata capture) {
        return build(channel, callOptions.withResponseMetadata(capture));
    }
}
