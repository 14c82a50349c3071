package dev.rdmarpc.core.protocol;

import dev.rdmarpc.core.Metadata;
import dev.rdmarpc.core.Status;

/** A decoded TRAILERS payload: the call's status and trailing metadata. */
public record Trailers(Status status, Metadata metadata) {
}
