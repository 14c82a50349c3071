package dev.rdmarpc.grpc;

import com.google.protobuf.ByteString;
import dev.rdmarpc.core.TransportMode;
import io.grpc.ManagedChannel;
import io.grpc.Server;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import io.grpc.netty.NegotiationType;
import io.grpc.netty.NettyChannelBuilder;
import io.grpc.netty.NettyServerBuilder;
import io.grpc.testing.integration.EmptyProtos.Empty;
import io.grpc.testing.integration.Messages.Payload;
import io.grpc.testing.integration.Messages.ResponseParameters;
import io.grpc.testing.integration.Messages.SimpleRequest;
import io.grpc.testing.integration.Messages.StreamingOutputCallRequest;
import io.grpc.testing.integration.TestServiceGrpc;
import io.grpc.testing.integration.TestServiceImpl;
import io.grpc.testing.integration.UnimplementedServiceGrpc;
import org.junit.jupiter.api.Test;

import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.util.Iterator;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** Bad input gets grpc-java's answers, and a protocol mismatch with plain gRPC fails fast in both directions. */
@org.junit.jupiter.api.extension.ExtendWith(SlabLeakCheck.class)
class BadInputTest {

    @Test
    void unknownMethodIsUnimplemented() throws Exception {
        try (Loopback lb = new Loopback(TransportMode.TCP)) {
            StatusRuntimeException e = assertThrows(StatusRuntimeException.class,
                    () -> UnimplementedServiceGrpc.newBlockingStub(lb.channel).unimplementedCall(Empty.getDefaultInstance()));
            assertEquals(Status.Code.UNIMPLEMENTED, e.getStatus().getCode());
            e = assertThrows(StatusRuntimeException.class,
                    () -> TestServiceGrpc.newBlockingStub(lb.channel).unimplementedCall(Empty.getDefaultInstance()));
            assertEquals(Status.Code.UNIMPLEMENTED, e.getStatus().getCode());
        }
    }

    @Test
    void requestOverServerMaximumIsResourceExhausted() throws Exception {
        try (Loopback lb = new Loopback(TransportMode.TCP, s -> s.maxInboundMessageSize(1024), c -> c)) {
            SimpleRequest big = SimpleRequest.newBuilder()
                    .setPayload(Payload.newBuilder().setBody(ByteString.copyFrom(new byte[4096]))).build();
            StatusRuntimeException e = assertThrows(StatusRuntimeException.class,
                    () -> TestServiceGrpc.newBlockingStub(lb.channel).unaryCall(big));
            assertEquals(Status.Code.RESOURCE_EXHAUSTED, e.getStatus().getCode(), e.getStatus().toString());
            // the channel still works
            TestServiceGrpc.newBlockingStub(lb.channel).emptyCall(Empty.getDefaultInstance());
        }
    }

    @Test
    void responseOverChannelMaximumIsResourceExhausted() throws Exception {
        try (Loopback lb = new Loopback(TransportMode.TCP, s -> s, c -> c.maxInboundMessageSize(1024))) {
            SimpleRequest req = SimpleRequest.newBuilder().setResponseSize(4096).build();
            StatusRuntimeException e = assertThrows(StatusRuntimeException.class,
                    () -> TestServiceGrpc.newBlockingStub(lb.channel).unaryCall(req));
            assertEquals(Status.Code.RESOURCE_EXHAUSTED, e.getStatus().getCode(), e.getStatus().toString());
            TestServiceGrpc.newBlockingStub(lb.channel).emptyCall(Empty.getDefaultInstance());
        }
    }

    @Test
    void requestOverCallMaximumOutboundIsRefusedLocally() throws Exception {
        try (Loopback lb = new Loopback(TransportMode.TCP)) {
            SimpleRequest big = SimpleRequest.newBuilder()
                    .setPayload(Payload.newBuilder().setBody(ByteString.copyFrom(new byte[4096]))).build();
            // first on a channel still connecting (grpc replays the send from its delayed stream), then warm
            for (int i = 0; i < 2; i++) {
                StatusRuntimeException e = assertThrows(StatusRuntimeException.class,
                        () -> TestServiceGrpc.newBlockingStub(lb.channel).withDeadlineAfter(60, TimeUnit.SECONDS)
                                .withMaxOutboundMessageSize(1024).unaryCall(big));
                assertEquals(Status.Code.CANCELLED, e.getStatus().getCode(), e.getStatus().toString());
                assertTrue(com.google.common.base.Throwables.getStackTraceAsString(e).contains("message too large"));
            }
        }
    }

    @Test
    void deadlineIsDeadlineExceeded() throws Exception {
        try (Loopback lb = new Loopback(TransportMode.TCP)) {
            StreamingOutputCallRequest slow = StreamingOutputCallRequest.newBuilder()
                    .addResponseParameters(ResponseParameters.newBuilder().setSize(1).setIntervalUs(10_000_000)).build();
            // the server answers after 10 s: a DEADLINE_EXCEEDED shows the 200 ms deadline ended the call
            StatusRuntimeException e = assertThrows(StatusRuntimeException.class, () -> {
                Iterator<?> it = TestServiceGrpc.newBlockingStub(lb.channel).withDeadlineAfter(200, TimeUnit.MILLISECONDS)
                        .streamingOutputCall(slow);
                it.next();
            });
            assertEquals(Status.Code.DEADLINE_EXCEEDED, e.getStatus().getCode(), e.getStatus().toString());
        }
    }

    @Test
    void noServerIsUnavailable() throws Exception {
        int port;
        try (ServerSocket s = new ServerSocket(0, 1, java.net.InetAddress.getLoopbackAddress())) {
            port = s.getLocalPort();
        }
        ManagedChannel ch = RdmaChannelBuilder.forAddress("127.0.0.1", port).build();
        try {
            StatusRuntimeException e = assertThrows(StatusRuntimeException.class,
                    () -> TestServiceGrpc.newBlockingStub(ch).withDeadlineAfter(60, TimeUnit.SECONDS).emptyCall(Empty.getDefaultInstance()));
            assertEquals(Status.Code.UNAVAILABLE, e.getStatus().getCode(), e.getStatus().toString());
        } finally {
            ch.shutdownNow();
        }
    }

    @Test
    void serverGoneDuringCallIsUnavailable() throws Exception {
        try (Loopback lb = new Loopback(TransportMode.TCP)) {
            TestServiceGrpc.newBlockingStub(lb.channel).emptyCall(Empty.getDefaultInstance());
            StreamingOutputCallRequest slow = StreamingOutputCallRequest.newBuilder()
                    .addResponseParameters(ResponseParameters.newBuilder().setSize(1).setIntervalUs(10_000_000)).build();
            Iterator<?> it = TestServiceGrpc.newBlockingStub(lb.channel).withDeadlineAfter(60, TimeUnit.SECONDS).streamingOutputCall(slow);
            lb.executor.schedule(lb.server::shutdownNow, 200, TimeUnit.MILLISECONDS);
            StatusRuntimeException e = assertThrows(StatusRuntimeException.class, it::next);
            assertEquals(Status.Code.UNAVAILABLE, e.getStatus().getCode(), e.getStatus().toString());
        }
    }

    @Test
    void rdmarpcOnlyChannelToGrpcNettyServerFailsFastNamingTheMismatch() throws Exception {
        ScheduledExecutorService exec = Executors.newScheduledThreadPool(1);
        Server netty = NettyServerBuilder.forAddress(new InetSocketAddress("127.0.0.1", 0))
                .addService(new TestServiceImpl(exec)).build().start();
        ManagedChannel ch = RdmaChannelBuilder.forAddress("127.0.0.1", netty.getPort())
                .wireProtocol(dev.rdmarpc.core.WireProtocol.RDMARPC).build();
        try {
            // failing fast: UNAVAILABLE naming the mismatch, not a DEADLINE_EXCEEDED after waiting for an answer
            StatusRuntimeException e = assertThrows(StatusRuntimeException.class,
                    () -> TestServiceGrpc.newBlockingStub(ch).withDeadlineAfter(60, TimeUnit.SECONDS).emptyCall(Empty.getDefaultInstance()));
            assertEquals(Status.Code.UNAVAILABLE, e.getStatus().getCode(), e.getStatus().toString());
            assertTrue(e.getStatus().getDescription().contains("HTTP/2"), e.getStatus().toString());
        } finally {
            ch.shutdownNow();
            netty.shutdownNow();
            exec.shutdownNow();
        }
    }

    @Test
    void grpcNettyChannelToRdmarpcServerWithoutHttp2FailsFastNamingTheMismatch() throws Exception {
        try (Loopback lb = new Loopback(TransportMode.TCP, b -> b.grpcOverHttp2(false), b -> b)) {
            ManagedChannel ch = NettyChannelBuilder.forAddress("127.0.0.1", lb.server.getPort())
                    .negotiationType(NegotiationType.PLAINTEXT).build();
            try {
                // failing fast: UNAVAILABLE naming the mismatch, not a DEADLINE_EXCEEDED after waiting for an answer
                StatusRuntimeException e = assertThrows(StatusRuntimeException.class,
                        () -> TestServiceGrpc.newBlockingStub(ch).withDeadlineAfter(60, TimeUnit.SECONDS).emptyCall(Empty.getDefaultInstance()));
                assertEquals(Status.Code.UNAVAILABLE, e.getStatus().getCode(), e.getStatus().toString());
                assertTrue(e.getStatus().getDescription().contains("rdmarpc protocol, not gRPC over HTTP/2"), e.getStatus().toString());
            } finally {
                ch.shutdownNow();
            }
        }
    }
}
