package dev.rdmarpc.bench.driver;

import dev.rdmarpc.bench.CallKind;
import dev.rdmarpc.bench.proto.BenchRequest;

/**
 * What each call of a cell sends and expects.
 *
 * @param kind         unary, server-stream or bidi
 * @param payloadSize  payload bytes of each request (unary, bidi) or of each streamed response (server-stream)
 * @param streamLength responses per server-stream call
 */
public record Workload(CallKind kind, int payloadSize, int streamLength) {

    /** The request message every call sends (built once, reused by every call). */
    public BenchRequest request() {
        return switch (kind) {
            case UNARY, BIDI -> BenchRequest.newBuilder().setPayload(Payloads.of(payloadSize)).build();
            case SERVER_STREAM -> BenchRequest.newBuilder().setResponseSize(payloadSize).setResponseCount(streamLength).build();
        };
    }

    /** Payload bytes one call moves, both directions together. */
    public long payloadBytesPerCall() {
        return switch (kind) {
            case UNARY, BIDI -> 2L * payloadSize;
            case SERVER_STREAM -> (long) payloadSize * streamLength;
        };
    }
}
