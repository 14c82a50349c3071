package dev.rdmarpc.core;

/** Captures the response headers and trailers of the calls it is attached to (see {@link CallOptions}). */
public final class ResponseMetadata {
    private volatile Metadata headers;
    private volatile Metadata trailers;

    /** The last response headers seen, or null. */
    public Metadata headers() {
        return headers;
    }

    /** The last trailers seen, or null. */
    public Metadata trailers() {
        return trailers;
    }

    /** Called by the runtime when response headers arrive. */
    public void recordHeaders(Metadata h) {
        this.headers = h;
    }

    /** Called by the runtime when trailers arrive. */
    public void recordTrailers(Metadata t) {
        this.trailers = t;
    }
}
