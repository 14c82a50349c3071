package dev.rdmarpc.it;

import dev.rdmarpc.core.CallOptions;
import dev.rdmarpc.core.Channel;
import dev.rdmarpc.core.ClientCall;
import dev.rdmarpc.core.ClientCalls;
import dev.rdmarpc.core.ClientInterceptor;
import dev.rdmarpc.core.ClientInterceptors;
import dev.rdmarpc.core.ForwardingClientCall.SimpleForwardingClientCall;
import dev.rdmarpc.core.MethodDescriptor;
import dev.rdmarpc.core.Status;
import org.junit.jupiter.api.Test;

import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;

/**
 * An exception thrown while {@code ClientCalls} starts a call (here from the call's {@code request}, as a broken
 * interceptor would throw) reaches the caller and cancels that call, as in grpc-java: the call does not hang open.
 */
class FailedCallStartTest extends LoopbackTest {
    private static final IllegalStateException BROKEN = new IllegalStateException("request broke");

    /** Throws from every {@code request}, after the call started. */
    private static final ClientInterceptor THROWING_REQUEST = new ClientInterceptor() {
        @Override
        public <ReqT, RespT> ClientCall<ReqT, RespT> interceptCall(MethodDescriptor<ReqT, RespT> method,
                                                                   CallOptions options, Channel next) {
            return new SimpleForwardingClientCall<>(next.newCall(method, options)) {
                @Override
                public void request(int n) {
                    throw BROKEN;
                }
            };
        }
    };

    private final CallKindsTest.Collector<byte[]> observer = new CallKindsTest.Collector<>();

    private Channel broken() {
        return ClientInterceptors.intercept(channel, THROWING_REQUEST);
    }

    private CallOptions options() {
        return CallOptions.DEFAULT.withDeadlineAfter(60, TimeUnit.SECONDS);
    }

    @Test
    void asyncServerStreamingCallIsCancelled() throws Exception {
        ClientCall<byte[], byte[]> call = broken().newCall(TestService.STREAM, options());
        assertSame(BROKEN, assertThrows(IllegalStateException.class,
                () -> ClientCalls.asyncServerStreamingCall(call, new byte[8], observer)));
        assertCancelledWithTheCause();
    }

    @Test
    void asyncBidiStreamingCallIsCancelled() throws Exception {
        ClientCall<byte[], byte[]> call = broken().newCall(TestService.CHAT, options());
        assertSame(BROKEN, assertThrows(IllegalStateException.class, () -> ClientCalls.asyncBidiStreamingCall(call, observer)));
        assertCancelledWithTheCause();
    }

    @Test
    void blockingUnaryCallIsCancelled() {
        assertSame(BROKEN, assertThrows(IllegalStateException.class,
                () -> ClientCalls.blockingUnaryCall(broken(), TestService.ECHO, options(), new byte[1])));
    }

    private void assertCancelledWithTheCause() throws Exception {
        Status s = observer.status();
        assertEquals(Status.Code.CANCELLED, s.getCode(), "the call was cancelled: " + s);
        assertSame(BROKEN, s.getCause());
    }
}
