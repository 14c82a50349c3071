package dev.rdmarpc.it;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.google.protobuf.ByteString;
import com.google.protobuf.BytesValue;
import dev.rdmarpc.core.CallOptions;
import dev.rdmarpc.core.ClientCalls;
import dev.rdmarpc.core.MethodDescriptor;
import dev.rdmarpc.core.MethodDescriptor.MethodType;
import dev.rdmarpc.core.RpcServer;
import dev.rdmarpc.core.ServerCalls;
import dev.rdmarpc.core.ServiceDefinition;
import dev.rdmarpc.core.protobuf.LendingMarshaller;
import dev.rdmarpc.core.protobuf.LentMessage;
import dev.rdmarpc.core.protobuf.ProtoMarshaller;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import org.junit.jupiter.api.Test;

/**
 * Lent messages over TCP on loopback: a server method whose requests are lent arrays, a client whose responses are;
 * what a lent message reads stays intact while other calls take and give back arrays of its size (the tests' pool
 * fills every array given back, so an array handed on too early would show), and the slabs are all back.
 */
class LentMessagesTest extends LoopbackTest {
    private static final ProtoMarshaller<BytesValue> PLAIN = ProtoMarshaller.of(BytesValue.getDefaultInstance());
    /** The method as codegen would make it. */
    private static final MethodDescriptor<BytesValue, BytesValue> ECHO =
            MethodDescriptor.create("test.Lend/Echo", MethodType.UNARY, PLAIN, PLAIN);
    /** The server's view: requests lent, responses plain. */
    private static final MethodDescriptor<LentMessage<BytesValue>, BytesValue> SERVER_ECHO = LendingMarshaller.lendingRequests(ECHO);
    /** The client's view of the same method: requests plain, responses lent. */
    private static final MethodDescriptor<BytesValue, LentMessage<BytesValue>> CLIENT_ECHO = LendingMarshaller.lendingResponses(ECHO);
    private static final int SIZE = 256 * 1024;

    /** Requests the server keeps unreleased (answering each with its bytes) until the test releases them. */
    private final List<LentMessage<BytesValue>> kept = new CopyOnWriteArrayList<>();

    @Override
    protected RpcServer.Builder configureServer(RpcServer.Builder b) {
        return b.addService(ServiceDefinition.builder("test.Lend")
                .addMethod(SERVER_ECHO, ServerCalls.asyncUnaryCall((request, responses) -> {
                    BytesValue message = request.message();
                    // kept before the response leaves: once the client has it, the test may count what was kept
                    if (request.isLent()) {
                        kept.add(request);
                    }
                    // the response is built on the lent bytes: sending copies them into the call's own buffer
                    responses.onNext(BytesValue.of(message.getValue()));
                    responses.onCompleted();
                    if (!request.isLent()) {
                        request.release();
                    }
                }))
                .build());
    }

    private static ByteString pattern(int seed) {
        return ByteString.copyFrom(Bytes.pattern(SIZE, seed));
    }

    @Test
    void lentMessagesStayIntactWhileOthersReuseBuffers() {
        List<LentMessage<BytesValue>> responses = new CopyOnWriteArrayList<>();
        int calls = 24;
        for (int i = 0; i < calls; i++) {
            LentMessage<BytesValue> response = ClientCalls.blockingUnaryCall(channel, CLIENT_ECHO, CallOptions.DEFAULT,
                    BytesValue.of(pattern(i)));
            assertTrue(response.isLent(), "a 256 KiB response is parsed into a lent array");
            assertEquals(pattern(i), response.message().getValue(), "response " + i);
            if (i % 2 == 0) {
                responses.add(response); // kept across the later calls
            } else {
                response.release(); // its array goes back and is taken again by the next calls
            }
        }
        assertEquals(calls, kept.size(), "every request was lent");
        for (int i = 0; i < calls; i++) {
            assertEquals(pattern(i), kept.get(i).message().getValue(), "request " + i + " after " + calls + " calls");
        }
        for (int i = 0; i < responses.size(); i++) {
            assertEquals(pattern(2 * i), responses.get(i).message().getValue(), "response " + 2 * i + " after the calls");
        }
        kept.forEach(LentMessage::release);
        responses.forEach(LentMessage::release);
        assertFalse(responses.isEmpty());
        // the slab check after the test: every buffer back
    }

    @Test
    void smallMessagesAreCopiedAndLendNothing() {
        ByteString small = ByteString.copyFromUtf8("small");
        try (LentMessage<BytesValue> response = ClientCalls.blockingUnaryCall(channel, CLIENT_ECHO, CallOptions.DEFAULT,
                BytesValue.of(small))) {
            assertFalse(response.isLent());
            assertEquals(small, response.message().getValue());
        }
        assertTrue(kept.isEmpty(), "the small request was released by the server at once");
    }
}
