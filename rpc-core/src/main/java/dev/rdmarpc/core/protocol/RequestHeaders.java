package dev.rdmarpc.core.protocol;

import dev.rdmarpc.core.Metadata;

/** A decoded client HEADERS payload: method path, authority, timeout (0 = none) and metadata. */
public record RequestHeaders(String path, String authority, long timeoutNanos, Metadata metadata) {
}
