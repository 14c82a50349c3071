package dev.rdmarpc.it;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.rdmarpc.core.CallOptions;
import dev.rdmarpc.core.ClientCall;
import dev.rdmarpc.core.Metadata;
import dev.rdmarpc.core.MethodDescriptor;
import dev.rdmarpc.core.MethodDescriptor.MethodType;
import dev.rdmarpc.core.RpcChannel;
import dev.rdmarpc.core.RpcServer;
import dev.rdmarpc.core.ServerInterceptor;
import dev.rdmarpc.core.ServiceDefinition;
import dev.rdmarpc.core.Status;

import java.util.concurrent.TimeUnit;

import org.junit.jupiter.api.Test;

/**
 * A server accepts attachments only where they are enabled: here on two methods of one service (through an
 * interceptor, which keeps the methods' limits), each with its own limit, and on no other method. An attachment
 * elsewhere, or over its method's limit, fails that call with RESOURCE_EXHAUSTED before any byte of it is read, and
 * the connection carries on; a server that enables none advertises none, and the client sends none.
 */
class AttachmentOptInTest extends LoopbackTest {
    private static final MethodDescriptor<byte[], byte[]> SMALL = method("Small");
    private static final MethodDescriptor<byte[], byte[]> LARGE = method("Large");
    private static final MethodDescriptor<byte[], byte[]> PLAIN = method("Plain");

    private static MethodDescriptor<byte[], byte[]> method(String name) {
        return MethodDescriptor.create("test.OptIn/" + name, MethodType.UNARY, Bytes.MARSHALLER, Bytes.MARSHALLER);
    }

    /** Three methods that echo each request, with its attachment when it has one. */
    private static ServiceDefinition service() {
        return ServiceDefinition.builder("test.OptIn")
                .addMethod(SMALL, AttachmentsTest::echo)
                .addMethod(LARGE, AttachmentsTest::echo)
                .addMethod(PLAIN, AttachmentsTest::echo)
                .build();
    }

    @Override
    protected RpcServer.Builder configureServer(RpcServer.Builder b) {
        ServerInterceptor passThrough = new ServerInterceptor() {
            @Override
            public <Q, R> dev.rdmarpc.core.ServerCall.Listener<Q> interceptCall(dev.rdmarpc.core.ServerCall<Q, R> call,
                    Metadata headers, dev.rdmarpc.core.ServerCallHandler<Q, R> next) {
                return next.startCall(call, headers);
            }
        };
        return b.addService(service().withAttachments(SMALL, 1024).withAttachments(LARGE, 1 << 20)).intercept(passThrough);
    }

    private static AttachmentsTest.Received call(RpcChannel ch, MethodDescriptor<byte[], byte[]> method, AttachmentsTest.Sent att) {
        ClientCall<byte[], byte[]> call = ch.newCall(method, CallOptions.DEFAULT.withDeadlineAfter(60, TimeUnit.SECONDS));
        AttachmentsTest.Received r = new AttachmentsTest.Received();
        call.start(r, new Metadata());
        call.request(2);
        call.sendMessage(new byte[]{7}, att.segment, att.onReleased());
        call.halfClose();
        return r;
    }

    private void assertEchoed(MethodDescriptor<byte[], byte[]> method, int size) throws Exception {
        try (AttachmentsTest.Sent sent = new AttachmentsTest.Sent(size, size)) {
            AttachmentsTest.Received r = call(channel, method, sent);
            assertEquals(Status.Code.OK, r.status().getCode(), r.status()::toString);
            assertArrayEquals(sent.bytes, r.attachments.getFirst());
            sent.assertReleasedOnce();
        }
    }

    private Status refused(MethodDescriptor<byte[], byte[]> method, int size) throws Exception {
        try (AttachmentsTest.Sent sent = new AttachmentsTest.Sent(size, 3)) {
            Status s = call(channel, method, sent).status();
            assertEquals(Status.Code.RESOURCE_EXHAUSTED, s.getCode(), s::toString);
            sent.assertReleasedOnce();
            return s;
        }
    }

    @Test
    void methodsThatEnableAttachmentsTakeThemUpToTheirOwnLimit() throws Exception {
        assertEchoed(SMALL, 1024);
        assertEchoed(LARGE, 1 << 20);
    }

    @Test
    void anAttachmentOnAMethodThatTakesNoneIsRefusedAndTheConnectionCarriesOn() throws Exception {
        Status s = refused(PLAIN, 100);
        assertTrue(s.getDescription().startsWith("request attachment of 100 bytes refused: test.OptIn/Plain accepts no attachments"),
                s::toString);
        assertTrue(s.getDescription().contains("none of its bytes were read"), s::toString);
        assertEchoed(SMALL, 10);
    }

    @Test
    void anAttachmentOverItsMethodsLimitIsRefusedAlthoughAnotherMethodTakesIt() throws Exception {
        Status s = refused(SMALL, 4096); // within LARGE's limit, which the server advertises, so the client sends it
        assertTrue(s.getDescription().startsWith("request attachment of 4096 bytes exceeds the maximum inbound attachment size 1024"),
                s::toString);
        assertEchoed(LARGE, 4096);
    }

    @Test
    void aServerThatEnablesNoneAdvertisesNoneAndTheClientSendsNone() throws Exception {
        RpcServer plain = RpcServer.forPort(0).addService(service()).build().start();
        RpcChannel ch = RpcChannel.forAddress("127.0.0.1", plain.getPort()).build();
        try (AttachmentsTest.Sent sent = new AttachmentsTest.Sent(10, 4)) {
            Status s = call(ch, SMALL, sent).status();
            assertEquals(Status.Code.RESOURCE_EXHAUSTED, s.getCode(), s::toString);
            assertTrue(s.getDescription().contains("takes no attachments; the message was not sent"), s::toString);
            sent.assertReleasedOnce();
        } finally {
            ch.shutdownNow();
            ch.awaitTermination(60, TimeUnit.SECONDS);
            plain.shutdownNow();
            plain.awaitTermination(60, TimeUnit.SECONDS);
        }
    }
}
