package dev.rdmarpc.core.protocol;

import dev.rdmarpc.core.Metadata;
import dev.rdmarpc.core.Status;

/**
 * A reusable target for decoding HEADERS and TRAILERS in place ({@link Frames#decodeRequestHeaders(WireReader,
 * DecodedHeaders, java.lang.foreign.MemorySegment, long, int, Utf8Cache, int)} and its siblings), so a connection's
 * reader decodes a call's headers without an object per frame. It holds the fields of the last frame decoded into it;
 * its metadata is null when that frame carried no entries, so a call with none makes no {@link Metadata}. Not
 * thread-safe: one per reader.
 */
public final class DecodedHeaders {
    String path;
    String authority;
    long timeoutNanos;
    Status status;
    Metadata metadata;

    /** An empty target. */
    public DecodedHeaders() {
    }

    /** Client HEADERS: the method path. */
    public String path() {
        return path;
    }

    /** Client HEADERS: the authority. */
    public String authority() {
        return authority;
    }

    /** Client HEADERS: the remaining time the client sent (0 = none). */
    public long timeoutNanos() {
        return timeoutNanos;
    }

    /** TRAILERS: the call's status. */
    public Status status() {
        return status;
    }

    /** The frame's metadata, or null when it carried no entries (the decoded instance: whoever takes it owns it). */
    public Metadata metadataOrNull() {
        return metadata;
    }

    /** Forgets the last frame's fields (drops the references they hold). */
    public void clear() {
        path = null;
        authority = null;
        timeoutNanos = 0;
        status = null;
        metadata = null;
    }
}
