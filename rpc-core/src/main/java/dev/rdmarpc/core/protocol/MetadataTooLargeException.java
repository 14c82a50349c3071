package dev.rdmarpc.core.protocol;

import dev.rdmarpc.core.Status;

/**
 * A received HEADERS or TRAILERS carries more metadata than this side accepts. Not a protocol error: the frame is
 * well formed, so only its stream fails (RESOURCE_EXHAUSTED) and the connection carries on.
 */
public final class MetadataTooLargeException extends RuntimeException {
    private static final long serialVersionUID = 1L;

    private final transient Status trailersStatus;
    private final int maxBytes;

    MetadataTooLargeException(String frame, int maxBytes) {
        this(frame, maxBytes, null);
    }

    private MetadataTooLargeException(String frame, int maxBytes, Status trailersStatus) {
        super("Header size exceeded max allowed size (" + maxBytes + "): " + frame + " metadata is larger than " + maxBytes
                + " bytes (key and value bytes plus " + Frames.METADATA_ENTRY_OVERHEAD + " per entry)", null, false, false);
        this.maxBytes = maxBytes;
        this.trailersStatus = trailersStatus;
    }

    MetadataTooLargeException withTrailersStatus(Status s) {
        return new MetadataTooLargeException("TRAILERS", maxBytes, s);
    }

    /** The limit that was passed. */
    public int maxBytes() {
        return maxBytes;
    }

    /** For TRAILERS: the status they carried (decoded before their metadata); null for HEADERS. */
    public Status trailersStatus() {
        return trailersStatus;
    }

    /** The status the stream fails with: RESOURCE_EXHAUSTED and this message (for TRAILERS, with the status they carried). */
    public Status toStatus() {
        String d = getMessage();
        if (trailersStatus != null) {
            d += "; the peer ended the call with " + trailersStatus.getCode()
                    + (trailersStatus.getDescription() == null ? "" : ": " + trailersStatus.getDescription());
        }
        return Status.RESOURCE_EXHAUSTED.withDescription(d);
    }
}
