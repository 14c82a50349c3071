package dev.rdmarpc.bench.driver;

import dev.rdmarpc.bench.proto.BenchRequest;
import dev.rdmarpc.bench.proto.BenchResponse;

import java.util.function.BiConsumer;
import java.util.function.Consumer;

/**
 * The benchmark service's behaviour, written once for both generated APIs: {@code O} is the API's
 * observer of responses, which the functions given for that API drive.
 */
final class EchoService<O> {
    private final int maxMessage;
    private final BiConsumer<O, BenchResponse> next;
    private final Consumer<O> completed;
    private final BiConsumer<O, String> invalid;

    /**
     * A service refusing server streams of messages above {@code maxMessage} bytes.
     *
     * @param next      sends one response
     * @param completed ends the responses
     * @param invalid   fails the call with INVALID_ARGUMENT and this description
     */
    EchoService(int maxMessage, BiConsumer<O, BenchResponse> next, Consumer<O> completed, BiConsumer<O, String> invalid) {
        this.maxMessage = maxMessage;
        this.next = next;
        this.completed = completed;
        this.invalid = invalid;
    }

    /** Echoes the request's payload. */
    void unary(BenchRequest request, O responses) {
        next.accept(responses, echo(request));
        completed.accept(responses);
    }

    /** Answers with {@code response_count} messages of {@code response_size} bytes. */
    void serverStream(BenchRequest request, O responses) {
        String bad = Payloads.checkStreamRequest(request.getResponseSize(), request.getResponseCount(), maxMessage);
        if (bad != null) {
            invalid.accept(responses, bad);
            return;
        }
        BenchResponse response = BenchResponse.newBuilder().setPayload(Payloads.of(request.getResponseSize())).build();
        for (int i = 0; i < request.getResponseCount(); i++) {
            next.accept(responses, response);
        }
        completed.accept(responses);
    }

    /** Echoes every request message of a bidi stream as one response message. */
    DualObserver<BenchRequest> bidi(O responses) {
        return new DualObserver<>() {
            @Override
            public void onNext(BenchRequest value) {
                next.accept(responses, echo(value));
            }

            @Override
            public void onError(Throwable t) {
                // the client went away; nothing to clean up
            }

            @Override
            public void onCompleted() {
                completed.accept(responses);
            }
        };
    }

    private static BenchResponse echo(BenchRequest request) {
        return BenchResponse.newBuilder().setPayload(request.getPayload()).build();
    }
}
