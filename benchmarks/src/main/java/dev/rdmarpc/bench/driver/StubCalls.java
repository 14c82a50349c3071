package dev.rdmarpc.bench.driver;

import dev.rdmarpc.bench.proto.BenchRequest;
import dev.rdmarpc.bench.proto.BenchResponse;

import java.util.function.BiConsumer;
import java.util.function.Consumer;
import java.util.function.Function;

/**
 * The calls of one connection's generated async stub, the same for both APIs (each is the stub's own
 * method: the observers handed over are {@link DualObserver}s, which either API accepts).
 *
 * @param unary        starts a unary call
 * @param serverStream starts a server-streaming call
 * @param bidi         opens a bidi stream, returning its request side
 */
record StubCalls(BiConsumer<BenchRequest, DualObserver<BenchResponse>> unary,
                 BiConsumer<BenchRequest, DualObserver<BenchResponse>> serverStream,
                 Function<DualObserver<BenchResponse>, RequestStream> bidi) {

    /**
     * The request side of a bidi stream.
     *
     * @param send      sends one request message
     * @param halfClose ends the requests
     */
    record RequestStream(Consumer<BenchRequest> send, Runnable halfClose) {
    }
}
