package dev.rdmarpc.core;

import java.time.Duration;
import java.util.concurrent.Executor;
import java.util.concurrent.TimeUnit;

/** Immutable per-call settings: deadline, extra request headers, executor, response-metadata capture, compression. */
public final class CallOptions {
    /** No deadline, no headers, the channel's executor. */
    public static final CallOptions DEFAULT = new CallOptions(null, null, null, null, null);

    private final Deadline deadline;
    private final Metadata headers;
    private final Executor executor;
    private final ResponseMetadata responseMetadata;
    private final String compression;

    private CallOptions(Deadline deadline, Metadata headers, Executor executor, ResponseMetadata responseMetadata,
                        String compression) {
        this.deadline = deadline;
        this.headers = headers;
        this.executor = executor;
        this.responseMetadata = responseMetadata;
        this.compression = compression;
    }

    public CallOptions withDeadline(Deadline d) {
        return new CallOptions(d, headers, executor, responseMetadata, compression);
    }

    public CallOptions withDeadlineAfter(long duration, TimeUnit unit) {
        return withDeadline(Deadline.after(duration, unit));
    }

    public CallOptions withDeadlineAfter(Duration duration) {
        return withDeadline(Deadline.after(duration));
    }

    /** Headers sent with every call made with these options (merged after any the caller passes). */
    public CallOptions withHeaders(Metadata h) {
        return new CallOptions(deadline, h, executor, responseMetadata, compression);
    }

    /** The executor on which the call's callbacks run, instead of the channel's. */
    public CallOptions withExecutor(Executor e) {
        return new CallOptions(deadline, headers, e, responseMetadata, compression);
    }

    /** Records the response headers and trailers of calls made with these options. */
    public CallOptions withResponseMetadata(ResponseMetadata capture) {
        return new CallOptions(deadline, headers, executor, capture, compression);
    }

    /**
     * Compresses the call's request messages with {@code compressorName} ("gzip", the one encoding core has; null or
     * "identity" for none), as grpc-java's {@code withCompression}: the call sends {@code grpc-encoding: gzip} and
     * {@code grpc-accept-encoding: gzip}, so the server may compress its responses too (see
     * {@link ServerCall#setCompression}). A message sent with an attachment goes uncompressed.
     */
    public CallOptions withCompression(String compressorName) {
        String name = compressorName == null || compressorName.equals("identity") ? null : compressorName;
        if (name != null && !name.equals("gzip")) {
            throw new IllegalArgumentException("unknown compressor " + compressorName + " (rdmarpc has gzip)");
        }
        return new CallOptions(deadline, headers, executor, responseMetadata, name);
    }

    /** The deadline, or null. */
    public Deadline getDeadline() {
        return deadline;
    }

    /** Extra request headers, or null. */
    public Metadata getHeaders() {
        return headers;
    }

    /** The executor, or null for the channel's. */
    public Executor getExecutor() {
        return executor;
    }

    /** The compressor's name ("gzip"), or null for none. */
    public String getCompressor() {
        return compression;
    }

    /** The capture, or null. */
    public ResponseMetadata getResponseMetadata() {
        return responseMetadata;
    }
}
